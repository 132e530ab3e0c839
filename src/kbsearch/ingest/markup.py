"""Template and shortcode markup removed from a document's text: what a site generator would
have replaced or rendered, and never text a reader sees.

- Jinja, Twig, Liquid (and Nunjucks, Django): tags ``{% if x %}``, ``{%- endif -%}``, output
  ``{{ page.title }}``, ``{{image_type}}``, comments ``{# ... #}``;
- Hugo shortcodes ``{{< figure src="a.png" >}}`` and ``{{% notice tip %}}`` (both are
  ``{{ ... }}``), the text between an opening and a closing shortcode kept;
- bracket shortcodes (Grav, WordPress): self-closing ``[fa=rocket /]``, with attributes
  ``[ui-tabs position="top"]`` or ``[size=20]``, closing ``[/center]``, and an opening tag without
  attributes ``[center]`` when the same document closes it (``[/center]``); the text between
  the tags stays.

MDX components (``<Callout type="info">``, ``<Badge />``) are HTML to the Markdown parser,
which keeps only their text (:mod:`kbsearch.ingest.markdown`; :mod:`kbsearch.ingest.mdx` for
``.mdx`` files).

Square brackets of real text survive: a Markdown link's text ``[text](url)``, a reference
``[text][ref]``, a link definition ``[ref]: url``, a footnote ``[^1]``, a task box ``[x]``, an
editorial ``[sic]`` or ``[Note]`` that nothing closes. Callers pass text outside code (code
spans and blocks keep ``{{ var }}`` as written).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# a tag runs on at most 400 characters: an unclosed "{{" in prose does not eat what follows
_TEMPLATE = re.compile(r"\{%.{0,400}?%\}|\{\{.{0,400}?\}\}|\{#.{0,400}?#\}", re.DOTALL)
_NAME = r"[A-Za-z][\w-]*"
_NOT_A_LINK = r"(?![(\[:])"
_CLOSING = re.compile(rf"\[/({_NAME})\]")
_SELF_CLOSING = re.compile(rf"\[{_NAME}(?:[=\s][^\[\]\n]*)?/\]")
_WITH_ATTRIBUTES = re.compile(rf"\[{_NAME}(?:=[^\[\]\s]+|\s+[\w-]+=)[^\[\]\n]*\]{_NOT_A_LINK}")


def closed_shortcodes(source: str) -> frozenset[str]:
    """The names of the bracket shortcodes ``source`` closes (``[/center]`` -> ``center``),
    lower-cased: an opening ``[center]`` of one of them is a tag, not text."""
    return frozenset(m.group(1).lower() for m in _CLOSING.finditer(source))


def strip_markup(text: str, closed: Iterable[str] = ()) -> str:
    """``text`` with its template and shortcode tags (module docstring) each replaced by one
    space (whitespace is collapsed later); ``closed``: :func:`closed_shortcodes` of the whole
    document, whose opening tags without attributes are removed too."""
    if "{" in text:
        text = _TEMPLATE.sub(" ", text)
    if "[" not in text:
        return text
    text = _SELF_CLOSING.sub(" ", _WITH_ATTRIBUTES.sub(" ", _CLOSING.sub(" ", text)))
    names = sorted(set(closed), key=len, reverse=True)
    if names:
        opening = re.compile(rf"\[(?i:{'|'.join(map(re.escape, names))})\]{_NOT_A_LINK}")
        text = opening.sub(" ", text)
    return text
