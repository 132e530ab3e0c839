"""Split a parsed document into passages that fit a token budget.

Consecutive text blocks of one section form a text passage; each table is its own passage.
Every passage text is ``"{title}\\n{section path}\\n\\n{body}"`` (the section line is left out
before the first heading), so the title and heading count for search.

A passage over the budget is split at paragraph boundaries, then at sentence boundaries, then
(only for a sentence longer than the budget) at word boundaries; the last ``overlap``
sentences (or the last paragraph, when small) of a piece are repeated at the start of the next.
A table over the budget is split by rows, the header row repeated in every piece. No text is
dropped: every word of the source appears in some passage.

Token counts: ``token_count`` measures a full passage text (for an embedder, its own tokenizer
with the passage prefix and special tokens). It is called once per paragraph or sentence to
estimate sizes (parts are assumed additive after removing ``token_count("")``), then once per
emitted piece to check it; an estimate that turns out too high is corrected by moving parts to
the next piece. So the number of calls grows linearly with the length of a document.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from kbsearch.errors import IngestError, InvalidArgumentError
from kbsearch.records import Block, Document, ParsedDocument, Passage, PassageKind, Table

SAMPLE_BUDGETS = 8  # texts over this many characters per budget token are estimated first
TOP_SLUG = "top"  # slug of the text before the first heading
EMPTY_SLUG = "section"  # slug of a heading with no letters or digits
_NON_ALNUM = re.compile(r"[\W_]+")
# A sentence break is the whitespace after . ! ? or an ellipsis (possibly followed by one
# closing quote or bracket) and before something that starts a sentence (a capital, a digit,
# an opening quote or bracket). Only the whitespace is consumed.
_SENTENCE_BREAK = re.compile(
    r"(?:(?<=[.!?…])|(?<=[.!?…][\"'»”’)\]]))\s+(?=[«\"“‘(\[]?\s*[A-ZÀ-ÖØ-Þ0-9])"
)

AtomKind = Literal["paragraph", "sentence", "words", "chars"]


def slugify(text: str) -> str:
    """Heading text to an id slug: NFKD, combining marks dropped, lowercase, every run of
    non-alphanumeric characters replaced by ``-``, ``-`` stripped at both ends.
    ``"Retours & remboursements"`` -> ``"retours-remboursements"``. May return ``""``."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _NON_ALNUM.sub("-", bare.lower()).strip("-")


def split_sentences(text: str) -> list[tuple[str, str]]:
    """Split ``text`` at line breaks and sentence ends. Returns ``(sentence, joiner)`` pairs,
    where joiner is the separator that stood before the sentence (``""`` for the first,
    ``"\\n"`` after a line break, ``" "`` after a sentence end)."""
    out: list[tuple[str, str]] = []
    for line in text.split("\n"):
        line_start = True
        for part in _SENTENCE_BREAK.split(line):
            part = part.strip()
            if not part:
                continue
            joiner = "" if not out else ("\n" if line_start else " ")
            out.append((part, joiner))
            line_start = False
    return out


@dataclass(frozen=True)
class _Atom:
    """A unit the packer never cuts (until refined): text, estimated token cost, the index of
    its source block, the separator put before it inside a piece, and what it is."""

    text: str
    cost: int
    block: int
    joiner: str
    kind: AtomKind


@dataclass(frozen=True)
class _Piece:
    body: str
    first_block: int
    last_block: int
    tokens: int


class _Sizer:
    """Wraps the caller's counter. ``measure`` runs it on a full passage text; ``estimate``
    is a cheap guess for a part: its length in characters times the tokens-per-character
    ratio measured on the whole section (set by :meth:`calibrated`)."""

    def __init__(
        self, token_count: Callable[[str], int], budget: int, overhead: int, ratio: float = 1.0
    ) -> None:
        self.measure = token_count
        self.budget = budget
        self.overhead = overhead
        self.ratio = ratio

    def calibrated(self, text: str, tokens: int) -> _Sizer:
        """A sizer whose ratio is measured on ``text`` (``tokens`` tokens)."""
        ratio = max(tokens - self.overhead, 1) / max(len(text), 1)
        return _Sizer(self.measure, self.budget, self.overhead, ratio)

    def fits(self, text: str) -> tuple[int | None, _Sizer]:
        """Measure ``text`` when it may fit the budget. A text longer than
        ``SAMPLE_BUDGETS`` x budget characters is first estimated from its beginning, and not
        measured whole when the estimate is over twice the budget (tokenizing a long page
        costs as much as tokenizing all its pieces). Returns (tokens or None, calibrated)."""
        if len(text) > SAMPLE_BUDGETS * self.budget:
            sample = text[: SAMPLE_BUDGETS * self.budget // 2]
            sized = self.calibrated(sample, self.measure(sample))
            if sized.estimate(text) > 2 * self.budget:
                return None, sized
        tokens = self.measure(text)
        return tokens, self.calibrated(text, tokens)

    def estimate(self, text: str) -> int:
        return max(1, math.ceil(len(text) * self.ratio))

    def atom(self, text: str, block: int, joiner: str, kind: AtomKind) -> _Atom:
        return _Atom(text, self.estimate(joiner + text), block, joiner, kind)


def _render(atoms: Sequence[_Atom]) -> str:
    return "".join((a.joiner if i else "") + a.text for i, a in enumerate(atoms))


def _refine(atom: _Atom, sizer: _Sizer, room: int) -> list[_Atom]:
    """Split an atom that does not fit into smaller ones: a paragraph into sentences, a sentence
    into word windows of about a third of ``room``, a word window into halves, a single word
    into character halves. Raises IngestError when one character cannot fit."""
    if atom.kind == "paragraph":
        sentences = split_sentences(atom.text)
        if len(sentences) > 1:
            return [
                sizer.atom(text, atom.block, atom.joiner if i == 0 else joiner, "sentence")
                for i, (text, joiner) in enumerate(sentences)
            ]
    words = atom.text.split()
    if len(words) > 1:
        if atom.kind in ("paragraph", "sentence"):
            per_word = max(atom.cost / len(words), 1e-9)
            size = max(1, int(max(room // 3, 1) / per_word))
        else:
            size = (len(words) + 1) // 2
        windows = [" ".join(words[k : k + size]) for k in range(0, len(words), size)]
        return [
            sizer.atom(text, atom.block, atom.joiner if i == 0 else " ", "words")
            for i, text in enumerate(windows)
        ]
    if len(atom.text) > 1:
        half = len(atom.text) // 2
        return [
            sizer.atom(atom.text[:half], atom.block, atom.joiner, "chars"),
            sizer.atom(atom.text[half:], atom.block, "", "chars"),
        ]
    raise IngestError(
        f"cannot fit {atom.text!r} with its title and heading in {sizer.budget} tokens"
    )


def _carry(piece: Sequence[_Atom], sizer: _Sizer, room: int, overlap: int) -> list[_Atom]:
    """The atoms repeated at the start of the next piece: the last ``overlap`` sentences or
    word windows, or the last paragraph when it costs at most a third of ``room`` (else its
    last ``overlap`` sentences). Nothing when that would take more than a third of ``room``."""
    if overlap <= 0 or not piece:
        return []
    limit = room // 3
    last = piece[-1]
    if last.kind == "paragraph":
        if last.cost <= limit:
            return [replace(last, joiner="\n\n")]
        sentences = split_sentences(last.text)[-overlap:]
        text = " ".join(t for t, _ in sentences)
        atom = sizer.atom(text, last.block, "\n\n", "sentence")
        return [atom] if atom.cost <= limit else []
    tail = list(piece[-overlap:])
    if any(a.kind == "paragraph" for a in tail):
        tail = [last]
    return tail if sum(a.cost for a in tail) <= limit else []


def _fill(atoms: Sequence[_Atom], start: int, used: float, limit: int) -> int:
    """Index after the last atom from ``start`` whose estimated costs keep ``used`` <= limit."""
    j = start
    while j < len(atoms) and used + atoms[j].cost <= limit:
        used += atoms[j].cost
        j += 1
    return j


def _pack(prefix: str, atoms: list[_Atom], sizer: _Sizer, overlap: int) -> list[_Piece]:
    """Greedy packing of ``atoms`` into pieces whose measured ``prefix + body`` fits the budget.

    Pieces are filled by estimate, then measured: an overshoot moves atoms to the next piece,
    an undershoot of more than 10 % tries (twice at most) to add more.
    Raises IngestError when the prefix alone leaves no room."""
    prefix_tokens = sizer.measure(prefix)
    room = sizer.budget - prefix_tokens
    if room <= 0:
        raise IngestError(
            f"title and heading take {prefix_tokens} tokens, over the passage budget "
            f"{sizer.budget}: {prefix.strip()[:80]!r}"
        )
    atoms = list(atoms)
    pieces: list[_Piece] = []
    carry: list[_Atom] = []
    i = 0
    while i < len(atoms):
        j = _fill(atoms, i, sum(a.cost for a in carry), room)
        if j == i:  # the next atom does not fit: refine it if too big alone, else drop the carry
            if carry and atoms[i].cost <= room:
                carry = []
            else:
                atoms[i : i + 1] = _refine(atoms[i], sizer, room)
            continue
        best: tuple[int, int, str] | None = None  # (j, tokens, body) of a piece that fits
        grows = 0
        while True:
            body = _render(_join(carry, atoms[i:j]))
            tokens = sizer.measure(prefix + body)
            if tokens <= sizer.budget:
                best = (j, tokens, body)
                grown = _fill(atoms, j, tokens - sizer.overhead, sizer.budget - sizer.overhead)
                if tokens >= 0.9 * sizer.budget or grown == j or grows == 2:
                    break
                grows += 1
                j = grown
            elif best is not None:  # growing overshot: keep the last piece that fitted
                break
            elif j - i > 1:  # drop atoms from the end until the estimated excess is gone
                excess = tokens - sizer.budget
                while j - i > 1 and excess > 0:
                    j -= 1
                    excess -= atoms[j].cost
            elif carry:
                carry = []
            else:
                break
        if best is None:  # a single atom measured over the budget
            atoms[i : i + 1] = _refine(atoms[i], sizer, room)
            continue
        j, tokens, body = best
        first = carry[0] if carry else atoms[i]
        pieces.append(_Piece(body, first.block, atoms[j - 1].block, tokens))
        carry = _carry(atoms[i:j], sizer, room, overlap) if j < len(atoms) else []
        i = j
    return pieces


def _join(carry: Sequence[_Atom], new: Sequence[_Atom]) -> list[_Atom]:
    """The carried overlap then the new atoms, the first new one set off as a paragraph."""
    if not carry:
        return list(new)
    return [*carry, replace(new[0], joiner="\n" if new[0].joiner == "\n" else "\n\n"), *new[1:]]


def _prefix(title: str, section: tuple[str, ...]) -> str:
    return f"{title}\n{' > '.join(section)}\n\n" if section else f"{title}\n\n"


def _text_pieces(
    prefix: str, blocks: Sequence[tuple[int, Block]], sizer: _Sizer, overlap: int
) -> list[_Piece]:
    body = "\n\n".join(b.text for _, b in blocks)
    tokens, sizer = sizer.fits(prefix + body)
    if tokens is not None and tokens <= sizer.budget:
        return [_Piece(body, blocks[0][0], blocks[-1][0], tokens)]
    atoms = [sizer.atom(b.text, idx, "\n\n", "paragraph") for idx, b in blocks]
    return _pack(prefix, atoms, sizer, overlap)


def render_table(table: Table) -> str:
    """``header1 | header2 | ...`` then one ``cell | cell | ...`` line per row."""
    lines = [" | ".join(table.header)] if table.header else []
    lines.extend(" | ".join(row) for row in table.rows)
    return "\n".join(lines)


def _table_pieces(prefix: str, index: int, table: Table, sizer: _Sizer) -> list[_Piece]:
    body = render_table(table)
    tokens, sizer = sizer.fits(prefix + body)
    if tokens is not None and tokens <= sizer.budget:
        return [_Piece(body, index, index, tokens)]
    if not table.rows or not table.header:  # nothing to repeat: split the lines as text
        lines = [sizer.atom(line, index, "\n", "sentence") for line in body.split("\n")]
        return _pack(prefix, lines, sizer, 0)
    head = " | ".join(table.header)
    rows = [sizer.atom(" | ".join(r), index, "\n", "sentence") for r in table.rows]
    pieces = _pack(f"{prefix}{head}\n", rows, sizer, 0)
    return [replace(p, body=f"{head}\n{p.body}") for p in pieces]


def _groups(blocks: Sequence[Block]) -> list[tuple[tuple[str, ...], list[tuple[int, Block]]]]:
    """Runs of non-empty text blocks of one section, and each table alone."""
    groups: list[tuple[tuple[str, ...], list[tuple[int, Block]]]] = []
    open_run = False
    for idx, block in enumerate(blocks):
        if block.table is not None:
            groups.append((block.section, [(idx, block)]))
            open_run = False
        elif block.text.strip():
            if open_run and groups[-1][0] == block.section:
                groups[-1][1].append((idx, block))
            else:
                groups.append((block.section, [(idx, block)]))
                open_run = True
    return groups


class _Ids:
    """``doc_id@vVERSION#slug`` with ``-2``, ``-3``... when a slug was already given."""

    def __init__(self, doc: Document) -> None:
        self.stem = f"{doc.doc_id}@v{doc.version}#"
        self.used: set[str] = set()
        self.counts: dict[str, int] = {}

    def next(self, section: tuple[str, ...]) -> str:
        base = (slugify(section[-1]) or EMPTY_SLUG) if section else TOP_SLUG
        n = self.counts.get(base, 0)
        while True:
            n += 1
            slug = base if n == 1 else f"{base}-{n}"
            if slug not in self.used:
                break
        self.counts[base] = n
        self.used.add(slug)
        return self.stem + slug


def make_passages(
    doc: Document,
    parsed: ParsedDocument,
    *,
    budget: int,
    token_count: Callable[[str], int],
    overlap: int = 1,
) -> list[Passage]:
    """Cut ``parsed`` into passages of at most ``budget`` tokens as measured by
    ``token_count`` on the full passage text.

    Ids follow ``doc_id@vVERSION#slug`` (slug of the section leaf, ``top`` before the first
    heading, ``-2``, ``-3``... for repeats and split pieces, in document order). ``ordinal`` is
    the 0-based position in the document; ``page`` and ``start`` come from the first block of
    the passage, ``end`` from its last block; ``token_count`` is the measured count.

    Raises:
        InvalidArgumentError: ``budget`` < 1 or ``overlap`` < 0.
        IngestError: the title and heading alone (or one character with them) exceed the
            budget, so some text could not be placed.
    """
    if budget < 1:
        raise InvalidArgumentError(f"budget must be at least 1 token, got {budget}")
    if overlap < 0:
        raise InvalidArgumentError(f"overlap must be >= 0, got {overlap}")
    title = doc.title or parsed.title or doc.doc_id
    sizer = _Sizer(token_count, budget, overhead=token_count(""))
    ids = _Ids(doc)
    blocks = parsed.blocks
    passages: list[Passage] = []
    for section, members in _groups(blocks):
        prefix = _prefix(title, section)
        first = members[0][1]
        kind: PassageKind = "table" if first.table is not None else "text"
        if first.table is not None:
            pieces = _table_pieces(prefix, members[0][0], first.table, sizer)
        else:
            pieces = _text_pieces(prefix, members, sizer, overlap)
        for piece in pieces:
            start_block, end_block = blocks[piece.first_block], blocks[piece.last_block]
            passages.append(
                Passage(
                    passage_id=ids.next(section),
                    doc_id=doc.doc_id,
                    version=doc.version,
                    section=" > ".join(section),
                    kind=kind,
                    text=prefix + piece.body,
                    ordinal=len(passages),
                    page=start_block.page,
                    start=start_block.start,
                    end=end_block.end,
                    token_count=piece.tokens,
                )
            )
    return passages
