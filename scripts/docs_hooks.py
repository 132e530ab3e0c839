"""MkDocs hooks (``hooks:`` in mkdocs.yml): the references generated when the site is built.

- ``<!-- cli -->``: every ``kbsearch`` command and subcommand, its usage and each option with
  the help line click itself prints (defaults and ranges included), walked from the click group.
- ``<!-- openapi -->``: the HTTP API, from the OpenAPI schema of the FastAPI app itself (an app
  over a one-page index in a temporary folder: no network, no model), and ``openapi.json``
  among the site's files.
- The Sphinx roles of the docstrings (``:meth:``, ``:class:``...) dropped from the Python API
  pages, which mkdocstrings renders as text.
"""

from __future__ import annotations

import json
import re
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

MARKER = "<!-- openapi -->"
CLI_MARKER = "<!-- cli -->"
METHODS = ("get", "post", "put", "delete")


def _commands(
    command: Any, path: tuple[str, ...], parent: Any
) -> list[tuple[tuple[str, ...], Any, Any]]:
    import click

    ctx = click.Context(command, info_name=path[-1], parent=parent)
    found = [(path, command, ctx)]
    if isinstance(command, click.Group):
        for name in sorted(command.commands):
            sub = command.commands[name]
            if not sub.hidden:
                found += _commands(sub, (*path, name), ctx)
    return found


def render_cli() -> str:
    """The command-line reference as Markdown: a section per command (``kbsearch search``),
    with its help, usage and a table of its options as ``--help`` shows them."""
    import click

    from kbsearch.cli import cli

    out = []
    for path, command, ctx in _commands(cli, ("kbsearch",), None):
        level = "#" * min(len(path) + 1, 4)
        out += [f"{level} {' '.join(path)}", ""]
        if command.help:
            out += [inspect_clean(command.help), ""]
        pieces = " ".join(command.collect_usage_pieces(ctx))
        out += ["```text", f"{ctx.command_path} {pieces}".rstrip(), "```", ""]
        rows = [
            record
            for param in command.get_params(ctx)
            if isinstance(param, click.Option) and not param.hidden
            for record in [param.get_help_record(ctx)]
            if record is not None
        ]
        if rows:
            out += ["| option | what it does |", "|---|---|"]
            out += [f"| `{_cell(opts)}` | {_cell(help_)} |" for opts, help_ in rows]
            out.append("")
    return "\n".join(out)


def inspect_clean(text: str) -> str:
    import inspect

    return inspect.cleandoc(text).replace("\b\n", "")


@cache
def openapi_schema() -> dict[str, Any]:
    """The schema ``kbsearch serve --keys FILE`` publishes at ``/openapi.json``."""
    import kbsearch
    from kbsearch.service.app import create_app

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "page.md").write_text("# A page\n\nSome text.\n", encoding="utf-8")
        with kbsearch.open_kb(root / "kb.db", create=True, embedder="none") as kb:
            kb.index([root / "page.md"], default_access="public")
        (root / "keys.txt").write_text("docs-build-staff-key-0001 staff write\n")
        return create_app(root / "kb.db", keys=root / "keys.txt").openapi()


def _type(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"] if s.get("type") != "null")
    if schema.get("type") == "array":
        return f"list of {_type(schema.get('items', {}))}"
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    return str(schema.get("format") or schema.get("type") or "any")


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _resolve(schema: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        return spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]  # type: ignore[no-any-return]
    return schema


def render_operation(method: str, path: str, op: dict[str, Any], spec: dict[str, Any]) -> str:
    """One operation as Markdown: summary, description, parameters, body and responses."""
    out = [f"### {method.upper()} `{path}`", ""]
    if op.get("summary"):
        out += [f"**{op['summary']}.**", ""]
    if op.get("description"):
        out += [op["description"].strip(), ""]
    params = op.get("parameters", [])
    if params:
        out += ["| parameter | in | type | required | default | description |"]
        out += ["|---|---|---|---|---|---|"]
        for p in params:
            schema = p.get("schema", {})
            default = f"`{json.dumps(schema['default'])}`" if "default" in schema else ""
            required = "yes" if p.get("required") else ""
            out.append(
                f"| `{p['name']}` | {p['in']} | {_type(schema)} | {required} | {default} | "
                f"{_cell(p.get('description') or schema.get('description') or '')} |"
            )
        out.append("")
    body = op.get("requestBody")
    if body:
        for media, content in body.get("content", {}).items():
            schema = _resolve(content.get("schema", {}), spec)
            out += [f"Request body: `{media}`.", ""]
            fields = schema.get("properties", {})
            if fields:
                needed = set(schema.get("required", []))
                out += ["| field | type | required | description |", "|---|---|---|---|"]
                for name, field in fields.items():
                    required = "yes" if name in needed else ""
                    out.append(
                        f"| `{name}` | {_type(field)} | {required} | "
                        f"{_cell(field.get('description', ''))} |"
                    )
                out.append("")
    out += ["| status | meaning |", "|---|---|"]
    for status, response in op.get("responses", {}).items():
        out.append(f"| {status} | {_cell(response.get('description', ''))} |")
    return "\n".join(out + [""])


def render_reference(spec: dict[str, Any]) -> str:
    """Every path and method of ``spec``, in the schema's order."""
    parts = []
    for path, item in spec["paths"].items():
        for method in METHODS:
            if method in item:
                parts.append(render_operation(method, path, item[method], spec))
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, render_cli())
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, render_reference(openapi_schema()))
    return markdown


# a Sphinx role before an inline literal (``:meth:`KnowledgeBase.index` ``) in a docstring,
# which mkdocstrings renders as the role's text followed by the code
SPHINX_ROLE = re.compile(r":(?:py:)?(?:meth|func|class|mod|attr|exc|data|obj):(?=<code>)")


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    return SPHINX_ROLE.sub("", html)


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    schema = json.dumps(openapi_schema(), indent=1)
    files.append(File.generated(config, "openapi.json", content=schema))
    return files
