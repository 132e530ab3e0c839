"""Split a parsed document into passages that follow its heading hierarchy and fit a token
budget.

Sections (:mod:`kbsearch.ingest.outline` gives every block its heading path) form a tree. Every
section is a passage of its own (its text; each table is a passage alone), except a sub-section
whose own text is under ``budget / TINY_SHARE`` tokens: its heading and text join the passage of
the nearest section above it that stands alone, while that passage still fits the budget
(a page's top-level sections always stand). A section with no text of its own gives no passage;
the heading path of its sub-sections names it. Every passage text is
``"{title}\n{heading path}\n\n{body}"`` (the path line is left out before the first heading),
so the title and headings count for search and for the embedding, and ``section`` holds the
same path (``"Install > Windows"``) for citations.

A passage over the budget is cut into pieces that fit it by :mod:`kbsearch.index.packing`
(paragraphs, then sentences, then words; tables by rows, the header repeated; no text is
dropped: every word of the source appears in some passage).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kbsearch.errors import InvalidArgumentError
from kbsearch.records import Block, Document, ParsedDocument, Passage, PassageKind
from kbsearch.text.slugs import slugify

from .packing import Sizer, table_pieces, text_pieces

CHUNKING = "outline-1"  # the passage rule of this module, recorded in an index's settings
TINY_SHARE = 16  # a sub-section under budget / TINY_SHARE tokens of text joins its parent
TOP_SLUG = "top"  # slug of the text before the first heading
EMPTY_SLUG = "section"  # slug of a heading with no letters or digits
PATH_SEPARATOR = "/"  # between the heading slugs of a passage id


def _prefix(title: str, section: tuple[str, ...]) -> str:
    return f"{title}\n{' > '.join(section)}\n\n" if section else f"{title}\n\n"


@dataclass
class _Section:
    """A node of the heading tree: its path, its own units (runs of text block indexes, or
    one table block index) in order, and its sub-sections."""

    path: tuple[str, ...]
    units: list[list[int]]
    children: list[_Section]
    first: int  # index of its first block (for a merged heading's position)


@dataclass
class _Job:
    """What becomes one or more passages: a section path and its blocks (all text, or one
    table)."""

    path: tuple[str, ...]
    blocks: list[int]
    table: bool = False


def _ordinals(blocks: Sequence[Block]) -> list[tuple[int, ...]]:
    """Each block's heading ordinals: its ``outline`` when the parser gave one, else made up
    from its path (consecutive blocks with the same path share a section; a path that differs
    from the previous block's opens new sections from the first heading that differs)."""
    out: list[tuple[int, ...]] = []
    path: tuple[str, ...] = ()
    ordinals: tuple[int, ...] = ()
    made = 0
    for block in blocks:
        if len(block.outline) == len(block.section) and block.outline:
            ordinals, path = block.outline, block.section
        elif block.section != path:
            same = 0
            while same < min(len(path), len(block.section)) and path[same] == block.section[same]:
                same += 1
            fresh = []
            for _ in block.section[same:]:
                made -= 1  # negative: never equal to a parser's ordinal
                fresh.append(made)
            ordinals, path = (*ordinals[:same], *fresh), block.section
        out.append(ordinals)
    return out


def _tree(blocks: Sequence[Block]) -> _Section:
    """The heading tree of the non-empty blocks."""
    root = _Section((), [], [], 0)
    nodes: dict[tuple[tuple[str, int], ...], _Section] = {(): root}
    for idx, (block, ordinals) in enumerate(zip(blocks, _ordinals(blocks), strict=True)):
        if block.table is None and not block.text.strip():
            continue
        key = tuple(zip(block.section, ordinals, strict=True))
        node = root
        for depth in range(1, len(key) + 1):
            child = nodes.get(key[:depth])
            if child is None:
                child = _Section(block.section[:depth], [], [], idx)
                nodes[key[:depth]] = child
                node.children.append(child)
            node = child
        if block.table is not None:
            node.units.append([idx])
        elif node.units and blocks[node.units[-1][0]].table is None:
            node.units[-1].append(idx)
        else:
            node.units.append([idx])
    return root


class _Planner:
    """Turns the heading tree into jobs in document order (see the module docstring)."""

    def __init__(self, blocks: Sequence[Block], title: str, sizer: Sizer) -> None:
        self.blocks = list(blocks)  # merged headings are appended as text blocks
        self.title = title
        self.sizer = sizer
        self.jobs: list[_Job] = []

    def _text(self, indexes: Sequence[int]) -> str:
        return "\n\n".join(self.blocks[i].text for i in indexes)

    def _tokens(self, text: str) -> int:
        """Tokens of ``text``, exact when it may fit the budget, else a value over it."""
        tokens, _ = self.sizer.fits(text)
        return self.sizer.budget + 1 if tokens is None else tokens

    def _merge(self, node: _Section, host: _Job) -> bool:
        """Put ``node``'s heading and text into ``host`` when its text is tiny and the host
        still fits the budget with it. Returns whether it did."""
        own = [i for unit in node.units for i in unit if self.blocks[i].table is None]
        if not own:
            return False
        body = self._text(own)
        tiny = self._tokens(body) - self.sizer.overhead < self.sizer.budget / TINY_SHARE
        if not tiny:
            return False
        first = self.blocks[node.first]
        heading = Block(node.path, node.path[-1], None, first.page, first.start, first.start)
        joined = self._text(host.blocks) + "\n\n" + heading.text + "\n\n" + body
        if self._tokens(_prefix(self.title, host.path) + joined) > self.sizer.budget:
            return False
        self.blocks.append(heading)
        host.blocks.extend([len(self.blocks) - 1, *own])
        return True

    def visit(self, node: _Section, host: _Job | None) -> None:
        """Plan ``node`` and its sub-sections; ``host`` is the text job of the nearest
        section above that stands alone (``None`` for the root and top-level sections)."""
        merged = host is not None and self._merge(node, host)
        if merged:
            assert host is not None
            tables = [_Job(node.path, unit, True) for unit in node.units
                      if self.blocks[unit[0]].table is not None]  # fmt: skip
            self.jobs.extend(tables)
            inner = host
        else:
            for unit in node.units:
                is_table = self.blocks[unit[0]].table is not None
                self.jobs.append(_Job(node.path, list(unit), is_table))
            if not self.jobs or self.jobs[-1].table or self.jobs[-1].path != node.path:
                self.jobs.append(_Job(node.path, []))  # filled by tiny sub-sections, if any
            inner = self.jobs[-1]
        for child in node.children:
            self.visit(child, inner if node.path else None)


class _Ids:
    """``doc_id@vVERSION#slug``: the heading path's slugs joined by ``/`` (``top`` before the
    first heading), with ``-2``, ``-3``... when a slug was already given."""

    def __init__(self, doc: Document) -> None:
        self.stem = f"{doc.doc_id}@v{doc.version}#"
        self.used: set[str] = set()
        self.counts: dict[str, int] = {}

    def next(self, section: tuple[str, ...]) -> str:
        slugs = [slugify(heading) or EMPTY_SLUG for heading in section]
        base = PATH_SEPARATOR.join(slugs) if section else TOP_SLUG
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
    ``token_count`` on the full passage text, following its heading tree (see the module
    docstring).

    Ids follow ``doc_id@vVERSION#slug``: the slugs of the passage's heading path joined by
    ``/`` (``returns`` for a top-level section, ``install/windows`` below it), ``top`` before
    the first heading, ``-2``, ``-3``... for repeated headings and split pieces, in document
    order. ``section`` is the heading path joined by `` > ``. ``ordinal`` is the 0-based
    position in the document; ``page`` and ``start`` come from the first block of the
    passage, ``end`` from its last block; ``token_count`` is the measured count.

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
    sizer = Sizer(token_count, budget, overhead=token_count(""), language=doc.language)
    planner = _Planner(parsed.blocks, title, sizer)
    planner.visit(_tree(parsed.blocks), None)
    blocks = planner.blocks
    ids = _Ids(doc)
    passages: list[Passage] = []
    for job in planner.jobs:
        if not job.blocks:
            continue
        prefix = _prefix(title, job.path)
        kind: PassageKind = "table" if job.table else "text"
        first_table = blocks[job.blocks[0]].table
        if first_table is not None:
            pieces = table_pieces(prefix, job.blocks[0], first_table, sizer)
        else:
            members = [(i, blocks[i]) for i in job.blocks]
            pieces = text_pieces(prefix, members, sizer, overlap)
        for piece in pieces:
            start_block, end_block = blocks[piece.first_block], blocks[piece.last_block]
            passages.append(
                Passage(
                    passage_id=ids.next(job.path),
                    doc_id=doc.doc_id,
                    version=doc.version,
                    section=" > ".join(job.path),
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
