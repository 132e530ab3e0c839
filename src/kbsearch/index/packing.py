"""Pack a section's text or table into pieces that fit a token budget.

A text over the budget is split at paragraph boundaries, then at sentence boundaries
(:func:`kbsearch.text.sentences.sentences`, in the document's language), then (only for a
sentence longer than the budget) at word boundaries; the last ``overlap`` sentences (or the
last paragraph, when small) of a piece are repeated at the start of the next. A table over the
budget is split by rows, the header row repeated in every piece. No text is dropped: every word
of the source appears in some piece.

Token counts: ``token_count`` measures a full passage text (for an embedder, its own tokenizer
with the passage prefix and special tokens). It is called once per paragraph or sentence to
estimate sizes (parts are assumed additive after removing ``token_count("")``), then once per
emitted piece to check it; an estimate that turns out too high is corrected by moving parts to
the next piece. So the number of calls grows linearly with the length of a document.

:mod:`kbsearch.index.chunking` decides which blocks form one passage (the heading tree); this
module cuts each of them to the budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from kbsearch.errors import IngestError
from kbsearch.records import Block, Table
from kbsearch.text.sentences import sentences

SAMPLE_BUDGETS = 8  # texts over this many characters per budget token are estimated first

AtomKind = Literal["paragraph", "sentence", "words", "chars"]


def split_sentences(text: str, language: str | None = None) -> list[tuple[str, str]]:
    """Split ``text`` at line breaks and sentence ends
    (:func:`kbsearch.text.sentences.sentences`). Returns ``(sentence, joiner)`` pairs, where
    joiner is the separator that stood before the sentence (``""`` for the first, ``"\\n"``
    after a line break, ``" "`` after a sentence end)."""
    out: list[tuple[str, str]] = []
    previous_end = 0
    for sentence in sentences(text, language):
        gap = text[previous_end : sentence.start]
        joiner = "" if not out else ("\n" if "\n" in gap else " ")
        out.append((sentence.text, joiner))
        previous_end = sentence.end
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
class Piece:
    """One passage's body (without its title and heading prefix), the indexes of its first
    and last source blocks, and its measured token count (prefix included)."""

    body: str
    first_block: int
    last_block: int
    tokens: int


class Sizer:
    """Wraps the caller's counter. ``measure`` runs it on a full passage text; ``estimate``
    is a cheap guess for a part: its length in characters times the tokens-per-character
    ratio measured on the whole section (set by :meth:`calibrated`)."""

    def __init__(
        self,
        token_count: Callable[[str], int],
        budget: int,
        overhead: int,
        ratio: float = 1.0,
        language: str | None = None,
    ) -> None:
        self.measure = token_count
        self.budget = budget
        self.overhead = overhead
        self.ratio = ratio
        self.language = language  # of the sentence rules

    def calibrated(self, text: str, tokens: int) -> Sizer:
        """A sizer whose ratio is measured on ``text`` (``tokens`` tokens)."""
        ratio = max(tokens - self.overhead, 1) / max(len(text), 1)
        return Sizer(self.measure, self.budget, self.overhead, ratio, self.language)

    def fits(self, text: str) -> tuple[int | None, Sizer]:
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


def _refine(atom: _Atom, sizer: Sizer, room: int) -> list[_Atom]:
    """Split an atom that does not fit into smaller ones: a paragraph into sentences, a sentence
    into word windows of about a third of ``room``, a word window into halves, a single word
    into character halves. Raises IngestError when one character cannot fit."""
    if atom.kind == "paragraph":
        parts = split_sentences(atom.text, sizer.language)
        if len(parts) > 1:
            return [
                sizer.atom(text, atom.block, atom.joiner if i == 0 else joiner, "sentence")
                for i, (text, joiner) in enumerate(parts)
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


def _carry(piece: Sequence[_Atom], sizer: Sizer, room: int, overlap: int) -> list[_Atom]:
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
        last_sentences = split_sentences(last.text, sizer.language)[-overlap:]
        text = " ".join(t for t, _ in last_sentences)
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


def _pack(prefix: str, atoms: list[_Atom], sizer: Sizer, overlap: int) -> list[Piece]:
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
    pieces: list[Piece] = []
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
        pieces.append(Piece(body, first.block, atoms[j - 1].block, tokens))
        carry = _carry(atoms[i:j], sizer, room, overlap) if j < len(atoms) else []
        i = j
    return pieces


def _join(carry: Sequence[_Atom], new: Sequence[_Atom]) -> list[_Atom]:
    """The carried overlap then the new atoms, the first new one set off as a paragraph."""
    if not carry:
        return list(new)
    return [*carry, replace(new[0], joiner="\n" if new[0].joiner == "\n" else "\n\n"), *new[1:]]


def text_pieces(
    prefix: str, blocks: Sequence[tuple[int, Block]], sizer: Sizer, overlap: int
) -> list[Piece]:
    """The pieces of the text ``blocks`` (``(index, block)``, joined by blank lines) that each
    fit ``sizer.budget`` tokens with ``prefix``: one piece when the whole fits, else packed by
    paragraphs, sentences and words, ``overlap`` sentences repeated (module docstring).

    Raises:
        IngestError: ``prefix`` alone (or one character with it) is over the budget.
    """
    body = "\n\n".join(b.text for _, b in blocks)
    tokens, sizer = sizer.fits(prefix + body)
    if tokens is not None and tokens <= sizer.budget:
        return [Piece(body, blocks[0][0], blocks[-1][0], tokens)]
    atoms = [sizer.atom(b.text, idx, "\n\n", "paragraph") for idx, b in blocks]
    return _pack(prefix, atoms, sizer, overlap)


def render_table(table: Table) -> str:
    """``header1 | header2 | ...`` then one ``cell | cell | ...`` line per row; a header of
    empty cells (Markdown's ``| | |`` above a key-value table) writes no line (it wrote
    `` | ``, which an answer then quoted)."""
    lines = [" | ".join(table.header)] if any(table.header) else []
    lines.extend(" | ".join(row) for row in table.rows)
    return "\n".join(lines)


def table_pieces(prefix: str, index: int, table: Table, sizer: Sizer) -> list[Piece]:
    """The pieces of ``table`` (block ``index``) that each fit ``sizer.budget`` tokens with
    ``prefix``: the whole table, else its rows packed with the header row repeated first in
    every piece (a table without header or rows: its lines packed as text).

    Raises:
        IngestError: ``prefix`` and the header alone are over the budget.
    """
    body = render_table(table)
    tokens, sizer = sizer.fits(prefix + body)
    if tokens is not None and tokens <= sizer.budget:
        return [Piece(body, index, index, tokens)]
    if not table.rows or not any(table.header):  # nothing to repeat: split lines as text
        lines = [sizer.atom(line, index, "\n", "sentence") for line in body.split("\n")]
        return _pack(prefix, lines, sizer, 0)
    head = " | ".join(table.header)
    rows = [sizer.atom(" | ".join(r), index, "\n", "sentence") for r in table.rows]
    pieces = _pack(f"{prefix}{head}\n", rows, sizer, 0)
    return [replace(p, body=f"{head}\n{p.body}") for p in pieces]
