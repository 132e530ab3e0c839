"""The heading rule of every format with heading levels (Markdown, MDX, reST, HTML, Word).

One :class:`Outline` per document collects its blocks under the current heading path:

- a level-1 heading is the title when none is known yet (front matter, a ``Title`` style);
  the same text again is dropped, a different one stays as a text block;
- a heading of level 2..``section_level`` opens a section: it closes every open section of
  its level or deeper, so a skipped level (``#`` then ``###``) nests under what is open;
- a deeper heading stays inside its section as a text block.

With ``section_level`` 1, level-1 headings open sections too (there is no title heading).
Each block records its section path (the heading texts) and, aligned with it, each heading's
ordinal among the document's headings (:attr:`kbsearch.records.Block.outline`), so two
sections with the same heading stay two sections. How sections become passages is
:mod:`kbsearch.index.chunking`'s work.
"""

from __future__ import annotations

from kbsearch.records import Block, Table

DEEPEST_LEVEL = 6


class Outline:
    """Collects a document's blocks under its heading path (see the module docstring)."""

    def __init__(self, section_level: int = DEEPEST_LEVEL) -> None:
        self.level = section_level
        self.title: str | None = None
        self.blocks: list[Block] = []
        self._open: list[tuple[int, str, int]] = []  # (level, heading text, ordinal)
        self._headings = 0

    @property
    def section(self) -> tuple[str, ...]:
        """The current section path, outermost heading first."""
        return tuple(text for _, text, _ in self._open)

    def add(
        self,
        text: str = "",
        table: Table | None = None,
        *,
        page: int | None = None,
        start: int | None = None,
        end: int | None = None,
    ) -> None:
        """A text or table block under the current path (an empty text is dropped)."""
        if text or table is not None:
            ordinals = tuple(n for _, _, n in self._open)
            self.blocks.append(Block(self.section, text, table, page, start, end, ordinals))

    def heading(
        self, level: int, text: str, *, start: int | None = None, end: int | None = None
    ) -> None:
        """A heading of ``level`` (1-6) read in document order (an empty text is dropped)."""
        if not text:
            return
        if level == 1 and self.level > 1:
            if self.title is None:
                self.title = text
            elif text != self.title:
                self.add(text, start=start, end=end)
        elif level <= self.level:
            self.close(level)
            self._headings += 1
            self._open.append((level, text, self._headings))
        else:
            self.add(text, start=start, end=end)

    def open_top(self, text: str) -> None:
        """Open a top-level section whatever the heading's level (an HTML ``<article>``'s own
        heading): every open section closes, and the page's headings below nest under it."""
        self.close(1)
        if text:
            self._headings += 1
            self._open.append((1, text, self._headings))

    def close(self, level: int) -> None:
        """Close the open sections of ``level`` or deeper (a format whose sections end
        explicitly, as reST's do)."""
        while self._open and self._open[-1][0] >= level:
            self._open.pop()
