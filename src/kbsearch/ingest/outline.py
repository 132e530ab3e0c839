"""Section bookkeeping shared by the parsers of formats with numbered heading levels (reST,
Word): the same rules as the Markdown and HTML parsers."""

from __future__ import annotations

from kbsearch.records import Block, Table


class Outline:
    """Collects blocks under the current section path.

    A level-1 heading is the title (a later, different one stays as text), levels
    2..``section_level`` open sections, deeper headings stay inside their section as text.
    """

    def __init__(self, section_level: int) -> None:
        self.level = section_level
        self.section: list[str] = []
        self.title: str | None = None
        self.blocks: list[Block] = []

    def add(self, text: str = "", table: Table | None = None) -> None:
        if text or table is not None:
            self.blocks.append(Block(tuple(self.section), text, table))

    def heading(self, level: int, text: str) -> None:
        if not text:
            return
        if level == 1 and self.level > 1:
            if self.title is None:
                self.title = text
            elif text != self.title:
                self.add(text)
        elif level <= self.level:
            depth = level - min(2, self.level)
            self.section = [*self.section[:depth], text]
        else:
            self.add(text)
