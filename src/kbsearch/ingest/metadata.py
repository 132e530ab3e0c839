"""Document metadata: which file becomes which document id, language and version.

Precedence for every field: the inventory row, then the file's own metadata (front matter,
card fields), then what the path says (``guide/docs.md`` -> doc id ``guide/docs``,
``page.fr.md`` -> language ``fr``), then the run's defaults (``--lang``, ``--default-access``),
then language detection. One exception: an inventory row (or an upload's form, written as one)
that says ``public`` for a file whose own metadata says ``staff`` is refused, never applied: a
document is not published over its own label.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict
from datetime import date
from pathlib import Path, PurePath

import yaml

from kbsearch.errors import IngestError, InvalidArgumentError, shown_value
from kbsearch.filters import parse_day
from kbsearch.ingest import FORMAT_MODULES
from kbsearch.ingest.fields import ACCESS_LABELS as ACCESS_LABELS
from kbsearch.ingest.fields import MAX_FIELD_CHARS, check_fields
from kbsearch.ingest.inventory import InventoryRow, period_text
from kbsearch.records import Document, ParsedDocument
from kbsearch.text.language import LANGUAGES, detect_language

RESERVED_ID_CHARS = "@#"  # passage ids are doc_id@vVERSION#slug
_LANGUAGE = re.compile(r"^[a-z]{2,3}$")
_CONTROL_OR_SPACE = re.compile(r"[\s\x00-\x1f\x7f]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


KNOWN_LANGUAGES = LANGUAGES  # the ISO 639 codes the language detector knows


def normalize_language(value: str, where: str = "language") -> str:
    """``EN``, ``en-GB``, ``fr_FR`` -> ``en``/``fr``: lower-cased ISO 639 code, region dropped.

    Raises:
        InvalidArgumentError: not a 2-3 letter code (``english``, ``e1``).
    """
    code = re.split(r"[-_]", value.strip().lower(), maxsplit=1)[0]
    if not _LANGUAGE.match(code):
        raise InvalidArgumentError(
            f"{where} {shown_value(value)} is not an ISO 639-1 code such as en or fr"
        )
    return code


def known_language(
    value: str, where: str = "language", absent: str = "to detect the language"
) -> str:
    """``value`` normalised (:func:`normalize_language`: ``fr-FR`` -> ``fr``) when it is one
    of ``KNOWN_LANGUAGES`` (the codes the language detector knows): the one check of a
    language a person types (``index --lang``, an upload's form, a search's language filter:
    ``--lang`` and ``lang=``), where ``zz`` is a typo, not a language. ``absent``: what
    leaving the value out does, for the message.

    Raises:
        InvalidArgumentError: not a code, or not a known one (the message lists them).
    """
    try:
        code = normalize_language(value, where)
    except InvalidArgumentError:
        code = ""
    if code not in KNOWN_LANGUAGES:
        raise InvalidArgumentError(
            f"unsupported {where} {shown_value(value)}; leave it out {absent}, or give"
            f" one of {', '.join(sorted(KNOWN_LANGUAGES))}"
        )
    return code


def language_from_name(path: PurePath) -> str | None:
    """The language a file name declares: ``page.fr.md`` -> ``fr`` (a known code before the
    suffix), else ``None``."""
    parts = path.name.split(".")
    if len(parts) >= 3 and parts[-2].lower() in KNOWN_LANGUAGES:
        return parts[-2].lower()
    return None


def path_doc_id(relative: PurePath) -> str:
    """The doc id a path gives: the path relative to the indexed folder, POSIX separators,
    without its last suffix (``guide/docs.md`` -> ``guide/docs``), in Unicode NFC (a name
    written in NFD, as macOS does, gives the id a user types). Whitespace and control
    characters (a newline in a file name) become one space."""
    relative = PurePath(unicodedata.normalize("NFC", str(relative)))
    parts = [*relative.parts[:-1], relative.stem]
    cleaned = (_CONTROL_OR_SPACE.sub(" ", part).strip() for part in parts)
    return "/".join(part for part in cleaned if part)


def check_identifier(value: str, what: str) -> str:
    """``value`` when it is usable in a passage id.

    Raises:
        IngestError: empty, or contains ``@``, ``#`` or a control character.
    """
    if not value.strip():
        raise IngestError(f"{what} is empty")
    bad = sorted({ch for ch in value if ch in RESERVED_ID_CHARS or _CONTROL.match(ch)})
    if bad:
        shown = ", ".join(repr(ch) for ch in bad)
        raise IngestError(
            f"{what} {shown_value(value)} contains {shown}, which passage ids"
            " (doc_id@vVERSION#section) reserve; rename the file or set another doc_id/version"
            " in the front matter or the inventory"
        )
    return value


# the tags YAML's safe loader constructs (str, int, float, bool, null, timestamp, seq, map...):
# any other (``!!python/object/apply:...``, ``!custom``) asks for an object, not text
SAFE_YAML_TAGS = frozenset(t for t in yaml.SafeLoader.yaml_constructors if t is not None)


def check_yaml_tags(field: str, node: yaml.Node, path: PurePath) -> None:
    """Raises IngestError when front-matter ``field``'s value (a composed YAML node, its
    items included) carries a tag the safe loader does not construct (:data:`SAFE_YAML_TAGS`):
    ``title: !!python/object/apply:os.system [...]`` was stored as the title
    ``os.system, ...``. Each node is visited once, so aliases that repeat a node (a "billion
    laughs" document) cost no more than the nodes written."""
    seen: set[int] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if current.tag not in SAFE_YAML_TAGS:
            tag = current.tag.replace("tag:yaml.org,2002:", "!!")
            raise IngestError(
                f"{path}: front matter field {field!r} has the YAML tag {tag}, which kbsearch"
                " does not read (write the value as plain text)"
            )
        if isinstance(current, yaml.SequenceNode):
            pending.extend(current.value)
        elif isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                pending.extend((key, value))


def parse_date(value: object, name: str = "date") -> date | None:
    """An ISO ``YYYY-MM-DD`` day or ``None`` for an empty value.

    Raises:
        IngestError: any other form, or a day that does not exist (2026-02-30).
    """
    if value in (None, ""):
        return None
    if isinstance(value, date):
        return value
    try:
        return parse_day(str(value).strip())
    except InvalidArgumentError as exc:
        raise IngestError(
            f"{name}: malformed date {shown_value(value)} (expected an existing day YYYY-MM-DD)"
        ) from exc


def format_name(source: PurePath) -> str:
    """A file's format as kbsearch names it, what an upload of it and the example inventory
    say (``markdown``, ``html``, ``word``: :data:`kbsearch.ingest.FORMAT_MODULES`), not its
    suffix (``md``, ``htm``, ``docx``); an unknown suffix is itself, lower-cased."""
    suffix = source.suffix.lower()
    return FORMAT_MODULES.get(suffix, suffix.lstrip("."))


def resolve_document(
    parsed: ParsedDocument,
    source: Path,
    row: InventoryRow | None,
    *,
    path_id: str | None = None,
    default_access: str,
    lang: str | None,
    undetected: str = "en",
) -> tuple[Document, bool]:
    """The document metadata (see the module docstring for the precedence). ``path_id`` is
    the id the path gives (:func:`path_doc_id`); the file stem when ``None``. ``undetected``:
    the language of a document that declares none and whose text tells none (too few letters,
    a table of digits; :func:`kbsearch.text.language.detect_language`'s default); ``""``
    leaves it for the caller to fill in.

    Returns the document (without content hash) and whether it got the default access label.

    Raises:
        IngestError: unknown access label, malformed or reversed dates, an unusable doc id
            or version, a language that is not an ISO 639 code; an inventory's ``public``
            over the file's own ``staff`` (module docstring).
    """
    meta = dict(parsed.metadata)
    inv = {k: v for k, v in asdict(row).items() if v not in (None, "")} if row else {}

    def pick(name: str, fallback: object = "") -> object:
        return inv.get(name) or meta.get(name) or fallback

    # a row's or card's own id in a file of many documents (BEIR, cards) names that document;
    # a single document's id from its front matter is metadata, below the inventory's
    own = parsed.doc_id if parsed.doc_id and parsed.doc_id != meta.get("doc_id") else None
    written = None if own else pick("doc_id")  # written by a person: an upload's rules
    doc_id = str(own or written or path_id or path_doc_id(PurePath(source.name)))
    version = str(pick("version", "1")).strip()
    access = str(pick("access", "")).strip()
    own_access = str(meta.get("access") or "").strip()
    if own_access == "staff" and access == "public":  # an inventory row's, an upload form's
        raise IngestError(
            f"{source.name}: its own metadata labels it staff-only, and the inventory (or an"
            " upload's access field) says public; a document is not published over its own"
            " label: make them agree"
        )
    defaulted = not access
    access = access or default_access
    texts = {name: str(pick(name)) for name in MAX_FIELD_CHARS if pick(name)}
    try:  # what the API refuses in an upload's form, with its message
        for name, default in (("version", "1"), ("access", default_access)):
            if name in meta and not inv.get(name) and not str(meta[name] or "").strip():
                # ``version: ""`` (or none) written in front matter: not the default silently
                raise InvalidArgumentError(
                    f"{name} is empty; leave it out for {default!r}, or give a value"
                )
        check_fields(
            doc_id=doc_id if written else None, version=version, access=access, texts=texts
        )
    except InvalidArgumentError as exc:
        raise IngestError(str(exc)) from exc
    check_identifier(doc_id, "doc id")  # an id a path or a BEIR or card file gives
    title = str(pick("title") or parsed.title or doc_id)
    declared = pick("language") or language_from_name(source) or lang
    if declared:
        try:
            language = normalize_language(str(declared))
        except InvalidArgumentError as exc:
            raise IngestError(str(exc)) from exc
    else:
        text = " ".join(b.text for b in parsed.blocks[:20] if b.text)
        language = detect_language(f"{title}\n{text}", default=undetected)
    document = Document(
        doc_id=doc_id,
        version=version,
        title=title,
        language=language,
        access=access,
        effective_from=parse_date(pick("effective_from", None), "effective_from"),
        effective_to=parse_date(pick("effective_to", None), "effective_to"),
        owner=str(pick("owner")),
        doc_type=str(pick("doc_type")),
        format=str(pick("format") or format_name(source)),
        source=str(source),
    )
    try:
        check_fields(effective_from=document.effective_from, effective_to=document.effective_to)
    except InvalidArgumentError as exc:
        raise IngestError(f"{doc_id}: {exc}") from exc
    return document, defaulted


def overlaps(a: Document, b: Document) -> bool:
    """True when the two (inclusive, open-ended when ``None``) effective periods share a day."""
    a_from, a_to = a.effective_from or date.min, a.effective_to or date.max
    b_from, b_to = b.effective_from or date.min, b.effective_to or date.max
    return a_from <= b_to and b_from <= a_to


def period(document: Document) -> str:
    return period_text(document.effective_from, document.effective_to)
