"""The one error adapter of the command line, for every command and subcommand.

A library error (:class:`kbsearch.errors.KbsearchError`) becomes one line ``error: <message>``
on stderr and exit status 1. A malformed command line (unknown option, bad choice, a value
that does not parse or is out of range) is a usage error: one line ``error: <click's
message> (see 'kbsearch COMMAND --help')`` and exit status 2, as are options that cannot go
together (:class:`kbsearch.errors.OptionConflictError`, which the library finds) and a language
filter naming a language the index does not hold
(:class:`kbsearch.errors.UnknownLanguageError`). Ctrl-C prints the one line ``interrupted``
and exits 130 (a command that has more to say, ``index``, says it on that line itself).
"""

from __future__ import annotations

import re
import sqlite3
from typing import IO, Any

import click

from kbsearch.errors import (
    SHOWN_CHARS,
    KbsearchError,
    NoVectorsError,
    OptionConflictError,
    UnknownLanguageError,
    shown_value,
)

from . import INTERRUPTED, interrupted

LIBRARY_ERROR = 1
USAGE_ERROR = 2  # what click.UsageError exits with
# ``kbsearch model`` without a subcommand is a usage error whose display is the help
_SHOWS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


# a value click quotes in its own message ("Invalid value for '--k': 'VALUE' is not ...")
# (opened after a space, a parenthesis or the start, closed before one or a punctuation mark)
_LONG_QUOTED = re.compile(f"(?<![^\\s(])'([^']{{{SHOWN_CHARS + 1},}})'(?=[\\s.,;:)]|$)")


def one_line(text: str) -> str:
    return " ".join(text.split())


def cut_quoted(text: str) -> str:
    """``text`` with each quoted value over :data:`~kbsearch.errors.SHOWN_CHARS` characters
    cut as :func:`~kbsearch.errors.shown_value` cuts one (click quotes the value it refuses
    whole)."""
    return _LONG_QUOTED.sub(lambda m: shown_value(m.group(1)), text)


def report(error: KbsearchError) -> None:
    """Print ``error`` as the single line ``error: <message>`` on stderr."""
    text = error.cli if isinstance(error, NoVectorsError) else str(error)
    message = one_line(text) or type(error).__name__
    click.echo(f"error: {message}", err=True)


class OneLineUsageError(click.ClickException):
    """A usage error shown as one line ``error: <message>`` on stderr; exit status 2."""

    exit_code = USAGE_ERROR

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"error: {self.message}", err=True)


def usage_error(
    error: click.UsageError | OptionConflictError | UnknownLanguageError, ctx: click.Context
) -> OneLineUsageError:
    """``error`` on one line, with the help command of the (sub)command it concerns."""
    if isinstance(error, click.UsageError):
        text, where = error.format_message(), (error.ctx or ctx).command_path
    else:  # raised by the library while the subcommand ran
        text, where = str(error), " ".join(filter(None, (ctx.command_path, ctx.invoked_subcommand)))
    return OneLineUsageError(f"{cut_quoted(one_line(text)).rstrip('.')} (see '{where} --help')")


class Group(click.Group):
    """A click group whose commands (and nested groups') library errors exit through
    :func:`report` with status 1, usage errors as one line with click's status 2, and
    Ctrl-C as ``interrupted`` with status 130 (before click would print "Aborted!", exit 1)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _SHOWS_HELP:
            raise
        except click.UsageError as error:
            raise usage_error(error, ctx) from None
        except (OptionConflictError, UnknownLanguageError) as error:
            raise usage_error(error, ctx) from None
        except KbsearchError as error:
            report(error)
            ctx.exit(LIBRARY_ERROR)
        except sqlite3.DatabaseError as error:  # read outside a read transaction (which
            # names the file, kbsearch.store.failures.storage_error): a damaged index
            click.echo(
                f"error: the index cannot be read ({one_line(str(error))}); restore it from"
                " a backup or rebuild it with `kbsearch index`",
                err=True,
            )
            ctx.exit(LIBRARY_ERROR)
        except KeyboardInterrupt:
            interrupted()
            ctx.exit(INTERRUPTED)


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
