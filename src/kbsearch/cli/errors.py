"""The one error adapter of the command line, for every command and subcommand.

A library error (:class:`kbsearch.errors.KbsearchError`) becomes one line ``error: <message>``
on stderr and exit status 1. A malformed command line (unknown option, bad choice, a value
that does not parse) is click's usage error: its message and exit status 2.
"""

from __future__ import annotations

from typing import Any

import click

from kbsearch.errors import KbsearchError

LIBRARY_ERROR = 1
USAGE_ERROR = 2  # what click.UsageError exits with


def report(error: KbsearchError) -> None:
    """Print ``error`` as the single line ``error: <message>`` on stderr."""
    message = " ".join(str(error).split()) or type(error).__name__
    click.echo(f"error: {message}", err=True)


class Group(click.Group):
    """A click group whose commands (and nested groups') library errors exit through
    :func:`report` with status 1; usage errors keep click's status 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KbsearchError as error:
            report(error)
            ctx.exit(LIBRARY_ERROR)


class ParsedValue(click.ParamType):
    """An option value read by a library parser: the parser's error is a usage error."""

    def __init__(self, name: str, parse: Any) -> None:
        self.name = name
        self._parse = parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return self._parse(value)
        except KbsearchError as error:
            self.fail(str(error), param, ctx)
