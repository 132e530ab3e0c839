"""Indexing runs over real folders: what is kept, refused, reported (issue 14 items 1, 5, 6,
8, 9, 10, 11, 12, 19)."""

from __future__ import annotations

import csv
import json
import os
from datetime import date
from pathlib import Path

import pytest
from support import write_files

import kbsearch
from kbsearch.errors import IngestError, InvalidArgumentError
from kbsearch.ingest.inventory import COLUMNS
from kbsearch.records import Filters

STAFF = Filters(audience="staff")


def _open(tmp_path: Path) -> kbsearch.KnowledgeBase:
    return kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none")


def _ids(kb: kbsearch.KnowledgeBase) -> list[tuple[str, str]]:
    return [(d.document.doc_id, d.document.version) for d in kb.documents()]


def _reasons(report: kbsearch.index.indexer.IndexReport) -> dict[str, str]:
    return {Path(source).name: reason for source, reason in report.failed}


@pytest.mark.parametrize(
    "breakage",
    [
        pytest.param(lambda p: p.write_bytes(b"# B\n\nbad byte \xff here\n"), id="not-utf8"),
        pytest.param(
            lambda p: p.write_text("---\naccess: Public\n---\n# B\n\nText.\n"), id="label"
        ),
        pytest.param("permission", id="permission"),
    ],
)
def test_prune_keeps_a_document_whose_file_fails(
    tmp_path: Path, breakage, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = write_files(tmp_path / "docs", {"a.md": "# A\n\nAlpha.\n", "b.md": "# B\n\nBeta.\n"})
    with _open(tmp_path) as kb:
        kb.index([docs])
        if breakage == "permission":  # a transient "Permission denied" (even for root)
            real = Path.read_bytes

            def denied(path: Path) -> bytes:
                if path.name == "b.md":
                    raise PermissionError(13, "Permission denied")
                return real(path)

            monkeypatch.setattr(Path, "read_bytes", denied)
        else:
            breakage(docs / "b.md")
        report = kb.index([docs], prune=True)
        monkeypatch.undo()
        assert (report.removed, list(_reasons(report))) == (0, ["b.md"])
        assert _ids(kb) == [("a", "1"), ("b", "1")]
        # once the file is gone, --prune removes it
        (docs / "b.md").unlink()
        assert kb.index([docs], prune=True).removed == 1
        assert _ids(kb) == [("a", "1")]


def test_prune_keeps_a_document_whose_file_was_emptied(tmp_path: Path) -> None:
    b = "---\ndoc_id: beta\nversion: '2'\n---\n# B\n\nBeta.\n"  # its ids in its front matter
    docs = write_files(tmp_path / "docs", {"a.md": "# A\n\nAlpha.\n", "b.md": b})
    with _open(tmp_path) as kb:
        kb.index([docs])
        (docs / "b.md").write_text("")  # truncated by accident
        report = kb.index([docs], prune=True)
        assert report.removed == 0 and any("nothing indexed" in w for _, w in report.warnings)
        assert _ids(kb) == [("a", "1"), ("beta", "2")]


def test_prune_keeps_documents_under_a_folder_that_cannot_be_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 14 item 7: --prune over an unreadable sub-folder (simulated: we run as root)."""
    docs = write_files(
        tmp_path / "docs",
        {
            "a.md": "# A\n\nAlpha.\n",
            "locked/b.md": "# B\n\nBeta.\n",
            "locked/deep/c.md": "# C\n\nGamma.\n",
        },
    )
    with _open(tmp_path) as kb:
        kb.index([docs])
        real = os.scandir

        def scandir(path):  # type: ignore[no-untyped-def]
            if Path(path) == docs / "locked":
                raise PermissionError(13, "Permission denied", str(path))
            return real(path)

        monkeypatch.setattr(os, "scandir", scandir)
        report = kb.index([docs], prune=True)
        monkeypatch.undo()
        assert report.removed == 0
        assert report.failed == [(str(docs / "locked"), "cannot list folder: Permission denied")]
        assert _ids(kb) == [("a", "1"), ("locked/b", "1"), ("locked/deep/c", "1")]
        # once the folder can be listed again and a file is gone, --prune removes it
        (docs / "locked" / "b.md").unlink()
        report = kb.index([docs], prune=True)
        assert (report.removed, report.failed) == (1, [])
        assert _ids(kb) == [("a", "1"), ("locked/deep/c", "1")]


def test_prune_keeps_a_document_whose_folder_cannot_be_looked_into(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored file outside the indexed paths whose folder denies access is not "gone"."""
    docs = write_files(tmp_path / "docs", {"a.md": "# A\n\nAlpha.\n"})
    other = write_files(tmp_path / "other", {"b.md": "# B\n\nBeta.\n"})
    with _open(tmp_path) as kb:
        kb.index([docs, other])
        real, denied = Path.stat, other.resolve()

        def stat(path: Path, **kwargs):  # type: ignore[no-untyped-def]
            if path.parent == denied:
                raise PermissionError(13, "Permission denied", str(path))
            return real(path, **kwargs)

        monkeypatch.setattr(Path, "stat", stat)
        report = kb.index([docs], prune=True)
        monkeypatch.undo()
        assert (report.removed, report.failed) == (0, [])
        assert _ids(kb) == [("a", "1"), ("b", "1")]


FRONT = "---\ndoc_id: policy\nversion: {v}\neffective_from: {start}\naccess: public\n---\n"


def test_overlapping_front_matter_versions_are_refused(tmp_path: Path) -> None:
    docs = write_files(
        tmp_path / "docs",
        {
            "v1.md": FRONT.format(v=1, start="2026-01-01") + "# Policy\n\nOld rule.\n",
            "v2.md": FRONT.format(v=2, start="2026-03-01") + "# Policy\n\nNew rule.\n",
        },
    )
    with _open(tmp_path) as kb:
        report = kb.index([docs])
        assert list(_reasons(report)) == ["v2.md"]
        assert "version 2 (2026-03-01 to open) overlaps version 1" in _reasons(report)["v2.md"]
        assert _ids(kb) == [("policy", "1")]
        hits = kb.search("rule", route="lexical", filters=Filters(as_of=date(2026, 6, 1)))
        assert [h.version for h in hits] == ["1"]


def test_overlap_is_checked_against_versions_of_earlier_runs(tmp_path: Path) -> None:
    header = ",".join(COLUMNS) + "\n"
    first = write_files(
        tmp_path / "one",
        {
            "inventory.csv": header + "a.md,policy,P,1,2026-01-01,,,public,en,,\n",
            "a.md": "# P\n\nOld.\n",
        },
    )
    second = write_files(
        tmp_path / "two",
        {
            "inventory.csv": header + "b.md,policy,P,2,2026-03-01,,,public,en,,\n",
            "b.md": "# P\n\nNew.\n",
        },
    )
    with _open(tmp_path) as kb:
        assert kb.index([first], inventory=first / "inventory.csv").ok
        report = kb.index([second], inventory=second / "inventory.csv")
        assert "overlaps version 1" in _reasons(report)["b.md"]
        assert _ids(kb) == [("policy", "1")]
        # closing version 1 first makes version 2 acceptable
        (first / "inventory.csv").write_text(
            header + "a.md,policy,P,1,2026-01-01,2026-02-28,,public,en,,\n"
        )
        assert kb.index([first], inventory=first / "inventory.csv").updated == 1
        assert kb.index([second], inventory=second / "inventory.csv").added == 1


def test_version_bump_in_the_same_file_needs_prune(tmp_path: Path) -> None:
    docs = write_files(
        tmp_path / "docs", {"p.md": FRONT.format(v=1, start="2026-01-01") + "# P\n\nText.\n"}
    )
    with _open(tmp_path) as kb:
        kb.index([docs])
        (docs / "p.md").write_text(FRONT.format(v=2, start="2026-01-01") + "# P\n\nText.\n")
        report = kb.index([docs])
        assert "re-run with --prune" in _reasons(report)["p.md"]
        report = kb.index([docs], prune=True)
        assert (report.added, report.removed, report.ok) == (1, 1, True)
        assert _ids(kb) == [("policy", "2")]


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        (
            "date.md",
            "---\neffective_from: 2026-02-30\n---\n# D\n\nText.\n",
            "effective_from: malformed date '2026-02-30'",
        ),
        ("deep.json", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (
            "big.json",
            '[{"id": ' + "7" * 5000 + ', "reference": "r", "family": "f", "text": "t"}]',
            "unreadable JSON value",
        ),
        (
            "null.json",
            '[{"id": null, "reference": "r", "family": "f", "text": "t"}]',
            "has the id null",
        ),
        (
            "list.json",
            '[{"id": ["list"], "reference": "r", "family": "f", "text": "t"}]',
            'has the id ["list"]',
        ),
        (
            "nan.json",
            '[{"id": NaN, "reference": "r", "family": "f", "text": "t"}]',
            "has the id nan",
        ),
        ("a@b.md", "# T\n\nText.\n", "contains '@'"),
        # written ids follow an upload's rules, with the API's message (ingest/fields.py)
        ("v.md", "---\nversion: 1#2\n---\n# T\n\nText.\n", "version must be 1 to 128"),
        ("fm.md", "---\ndoc_id: x@y\n---\n# T\n\nText.\n", "doc_id must be 1 to 128"),
        # an empty value written is refused as the API's form refuses "version=", not the
        # default taken silently
        (
            "ev.md",
            '---\nversion: ""\n---\n# T\n\nText.\n',
            "version is empty; leave it out for '1'",
        ),
        ("nv.md", "---\nversion:\n---\n# T\n\nText.\n", "version is empty; leave it out for '1'"),
        ("ea.md", "---\naccess: ' '\n---\n# T\n\nText.\n", "access is empty; leave it out for"),
        ("lang.md", "---\nlanguage: French\n---\n# T\n\nText.\n", "not an ISO 639-1 code"),
    ],
)
def test_one_bad_file_is_a_one_line_failure(
    tmp_path: Path, name: str, content: str, reason: str
) -> None:
    docs = write_files(tmp_path / "docs", {"good.md": "# Good\n\nFine text.\n", name: content})
    with _open(tmp_path) as kb:
        report = kb.index([docs])
        assert list(_reasons(report)) == [name]
        assert reason in _reasons(report)[name] and "\n" not in _reasons(report)[name]
        assert _ids(kb) == [("good", "1")]


def test_html_nested_a_thousand_divs_deep_is_indexed(tmp_path: Path) -> None:
    page = "<html><body>" + "<div>" * 1000 + "deep words" + "</div>" * 1000 + "</body></html>"
    docs = write_files(tmp_path / "docs", {"deep.html": page, "good.md": "# Good\n\nFine.\n"})
    with _open(tmp_path) as kb:
        report = kb.index([docs])
        assert (report.added, report.ok) == (2, True)
        assert [h.doc_id for h in kb.search("deep", route="lexical", filters=STAFF)] == ["deep"]


def test_language_code_is_normalised_or_refused(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "docs", {"a.md": "# A\n\nShort.\n"})
    with _open(tmp_path) as kb:
        kb.index([docs], lang="EN")
        assert [d.document.language for d in kb.documents()] == ["en"]
        with pytest.raises(InvalidArgumentError, match="--lang 'english'"):
            kb.index([docs], lang="english")
        before = kb.documents()
        with pytest.raises(InvalidArgumentError, match=r"--lang 'zz'.* en, eo, es, .* fr, "):
            kb.index([docs], lang="zz")  # a code in form, but no language: a typo
        assert kb.documents() == before


def test_language_from_the_file_name(tmp_path: Path) -> None:
    docs = write_files(
        tmp_path / "docs",
        {"page.fr.md": "# Page\n\nThe words here are English.\n", "page.md": "# Page\n\nHello.\n"},
    )
    with _open(tmp_path) as kb:
        kb.index([docs], lang="en")
        assert {d.document.doc_id: d.document.language for d in kb.documents()} == {
            "page": "en",
            "page.fr": "fr",
        }


def test_newline_in_a_file_name_is_not_in_the_doc_id(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "docs", {"two\nlines.md": "# T\n\nText.\n"})
    with _open(tmp_path) as kb:
        kb.index([docs])
        assert _ids(kb) == [("two lines", "1")]


def test_versions_are_read_as_written(tmp_path: Path) -> None:
    docs = write_files(
        tmp_path / "docs",
        {
            "a.md": "---\ndoc_id: guide\nversion: 1.10\neffective_from: 2026-02-01\n---\n"
            "# G\n\nTen.\n",
            "b.md": "---\ndoc_id: guide\nversion: 1.1\neffective_to: 2026-01-31\n---\n"
            "# G\n\nOne.\n",
        },
    )
    with _open(tmp_path) as kb:
        assert kb.index([docs]).ok
        assert _ids(kb) == [("guide", "1.1"), ("guide", "1.10")]


def test_same_file_name_in_two_folders_gives_two_documents(tmp_path: Path) -> None:
    docs = write_files(
        tmp_path / "docs",
        {"guide/docs.md": "# Guide\n\nGuide text.\n", "admin/docs.md": "# Admin\n\nAdmin text.\n"},
    )
    with _open(tmp_path) as kb:
        assert kb.index([docs]).ok
        assert _ids(kb) == [("admin/docs", "1"), ("guide/docs", "1")]


def test_a_second_file_claiming_an_id_is_refused(tmp_path: Path) -> None:
    en = write_files(tmp_path / "en", {"returns.md": "# Returns\n\nThirty days.\n"})
    fr = write_files(tmp_path / "fr", {"returns.md": "# Retours\n\nTrente jours.\n"})
    with _open(tmp_path) as kb:
        kb.index([en])
        report = kb.index([fr])
        reason = _reasons(report)["returns.md"]
        assert f"already indexed from {en / 'returns.md'}" in reason
        assert "give one of the files its own doc_id" in reason
        assert [h.text for h in kb.search("thirty", route="lexical", filters=STAFF)]
        # a moved file takes its id along
        (en / "returns.md").rename(tmp_path / "returns.md")
        assert kb.index([tmp_path / "returns.md"]).updated == 1


def test_default_access_is_remembered_and_changes_reported(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "docs", {"a.md": "# A\n\nAlpha words.\n"})
    with _open(tmp_path) as kb:
        assert kb.index([docs]).default_access_label == "staff"
        report = kb.index([docs], default_access="public")
        assert report.access_changed == [("a@v1", "staff", "public")]
        report = kb.index([docs])  # no flag: the remembered label, nothing flips back
        assert (report.default_access_label, report.unchanged, report.access_changed) == (
            "public",
            1,
            [],
        )
        assert kb.search("alpha", route="lexical")


def test_title_only_page_is_a_warning_and_reruns_are_clean(tmp_path: Path) -> None:
    docs = write_files(
        tmp_path / "docs", {"a.md": "# A\n\nAlpha.\n", "title.md": "# Only a title\n"}
    )
    with _open(tmp_path) as kb:
        report = kb.index([docs])
        assert report.ok and report.added == 1
        assert [(Path(s).name, r) for s, r in report.warnings] == [
            ("title.md", "has only a title; nothing indexed")
        ]
        again = kb.index([docs])
        assert again.ok and again.unchanged == 1


def test_unsupported_files_are_listed_and_empty_folders_refused(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "docs", {"a.md": "# A\n\nAlpha.\n", "logo.svg": "<svg/>"})
    (tmp_path / "empty").mkdir()
    write_files(tmp_path / "junk", {"x.png": "x"})
    with _open(tmp_path) as kb:
        assert [Path(p).name for p in kb.index([docs]).unsupported] == ["logo.svg"]
        with pytest.raises(IngestError, match="no file to index in .*empty"):
            kb.index([tmp_path / "empty"], prune=True)
        with pytest.raises(IngestError, match=r"\(1 unsupported file\(s\)\)"):
            kb.index([tmp_path / "junk"], prune=True)
        assert _ids(kb) == [("a", "1")]


def test_report_as_json_lists_warnings(tmp_path: Path) -> None:
    docs = write_files(tmp_path / "docs", {"a.md": "# A\n\nAlpha.\n", "t.md": "# T\n"})
    with _open(tmp_path) as kb:
        payload = json.loads(json.dumps(kb.index([docs]).to_dict()))
    assert payload["warnings"][0]["reason"] == "has only a title; nothing indexed"


@pytest.mark.parametrize(("name", "text"), [("corpus.jsonl", ""), ("cards.json", "[]")])
def test_a_file_with_no_documents_is_a_warning(tmp_path: Path, name: str, text: str) -> None:
    docs = write_files(tmp_path / "docs", {"a.md": "# A\n\nAlpha.\n", name: text})
    with _open(tmp_path) as kb:
        report = kb.index([docs])
    assert (report.added, report.failed) == (1, [])
    source = str((docs / name).resolve())
    assert report.warnings == [(source, "holds no documents; nothing indexed")]


def test_two_files_with_one_path_id_say_how_to_resolve_it(tmp_path: Path) -> None:
    docs = write_files(
        tmp_path / "docs",
        {"faq.html": "<h1>FAQ</h1><p>Web answers.</p>", "faq.md": "# FAQ\n\nOld.\n"},
    )
    with _open(tmp_path) as kb:
        report = kb.index([docs])
    assert report.added == 1
    assert report.failed == [
        (
            str((docs / "faq.md").resolve()),
            f"duplicate document faq version 1 (also in {(docs / 'faq.html').resolve()}); give"
            " one of them another `doc_id:` (front matter or the inventory)",
        )
    ]


def test_the_index_own_files_and_upload_store_are_never_indexed(tmp_path: Path) -> None:
    """issue 22: `kbsearch index . --prune` with the database inside the folder indexed read
    `kb.db.uploads/...` as new documents and pruned the uploaded document itself."""
    from kbsearch.service.uploads import Upload, write_upload

    root = write_files(tmp_path / "kb", {"guide.md": "# Guide\n\n## Start\n\nPlug it in.\n"})
    kb = kbsearch.open_kb(root / "kb.db", create=True, embedder="none")
    memo = Upload("memo", "memo.md", b"# Memo\n\n## Rule\n\nParcels leave at noon.\n")
    write_upload(kb, Upload(**{**memo.__dict__, "access": "public"}))
    assert (root / "kb.db.uploads" / "memo" / "v1" / "memo.md").is_file()
    for _ in range(2):  # a second run finds the same: nothing new, nothing pruned
        report = kb.index([root], default_access="public", prune=True)
        assert report.failed == [] and report.removed == 0
        ids = sorted(d.document.doc_id for d in kb.documents())
        assert ids == ["guide", "memo"]
    assert kb.search("parcels noon", route="lexical", filters=Filters())[0].doc_id == "memo"


def test_a_reembedding_walks_past_the_index_own_files_too(tmp_path: Path) -> None:
    from kbsearch.index.indexer import own_paths

    db = tmp_path / "kb.db"
    expected = {db.name, "kb.db-wal", "kb.db.uploads", "kb.db.reembed", "kb.db.reembed-wal"}
    assert {p.name for p in own_paths(db)} >= expected
    assert own_paths(tmp_path / "kb.db.reembed") == own_paths(db)


def test_a_write_reads_the_documents_it_touches_not_every_document(tmp_path: Path) -> None:
    """Indexing one file reads the stored versions of its doc ids and of its file (by index),
    never the whole documents table; a version overlap with an earlier run is still found."""
    docs = write_files(
        tmp_path / "docs",
        {f"d{i}.md": f"# Doc {i}\n\n## Part\n\nText {i}.\n" for i in range(5)},
    )
    new = write_files(
        tmp_path / "new",
        {
            "policy.md": "---\ndoc_id: d1\nversion: '2'\n---\n# Doc 1\n\n## Part\n\nNew text.\n",
            "other.md": "# Other\n\n## Part\n\nOther text.\n",
        },
    )
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        kb.index([docs])
        statements: list[str] = []
        with kb.store.database.tracing(statements.append):
            report = kb.index([new / "policy.md", new / "other.md"])
        reads = [s for s in statements if "FROM documents" in s and "SELECT" in s]
        assert reads
        # each names the rows it reads (a key, ids or sources), none reads the whole table
        # (the tracer shows statements with their values bound: a key reads "doc_id = 'd1'")
        assert all(" IN (" in s or "doc_id = '" in s for s in reads), reads
        assert [source for source, _ in report.failed] == [str(new / "policy.md")]
        assert "overlaps version 1" in report.failed[0][1]
        assert [d.document.doc_id for d in kb.documents()] == [
            *(f"d{i}" for i in range(5)),
            "other",
        ]


def test_a_document_of_digits_takes_the_collections_language_not_english(
    tmp_path: Path,
) -> None:
    """A price table of digits has too few letters to detect: it takes the language most of
    the run's documents have (French here), and English only when none has one."""
    french = "Les remboursements sont versés sous quatorze jours après réception du colis."
    docs = write_files(
        tmp_path / "docs",
        {
            "retours.md": f"# Retours\n\n## Délais\n\n{french}\n",
            "livraison.md": f"# Livraison\n\n## Suivi\n\n{french} Le suivi est envoyé.\n",
            "2024.md": "# 2024\n\n## 12\n\n| 1 | 2 |\n|---|---|\n| 30 | 45 |\n",
        },
    )
    with _open(tmp_path) as kb:
        kb.index([docs])
        languages = {d.document.doc_id: d.document.language for d in kb.documents()}
    assert languages == {"retours": "fr", "livraison": "fr", "2024": "fr"}
    alone = write_files(tmp_path / "alone", {"7.md": "# 7\n\n## 8\n\n9 10 11\n"})
    with kbsearch.open_kb(tmp_path / "alone.db", create=True, embedder="none") as kb:
        kb.index([alone])
        assert [d.document.language for d in kb.documents()] == ["en"]


def test_a_run_holds_no_parsed_document_while_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file's parsed blocks are let go once its document is split: by the first write, no
    parsed document of the run is alive (the run holds its passages, not their sources twice)."""
    import gc

    from kbsearch.records import ParsedDocument
    from kbsearch.store.documents import Documents

    docs = write_files(
        tmp_path / "docs",
        {f"d{i}.md": f"# Doc {i}\n\n## Part\n\nText {i}.\n" for i in range(6)},
    )
    alive: list[int] = []
    write = Documents.write

    def counting(self: Documents, *args: object, **kwargs: object) -> None:
        gc.collect()
        alive.append(sum(isinstance(o, ParsedDocument) for o in gc.get_objects()))
        write(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Documents, "write", counting)
    with _open(tmp_path) as kb:
        assert kb.index([docs]).added == 6
    assert alive and max(alive) == 0, alive


WRITTEN_IDS = [
    "a\\b",  # a Windows path separator
    "/abs/id",
    "guide//parking",
    "../escape",
    "guide/../up",
    ".journal",  # a reserved name of the upload store
    "has space",
    "tab\there",
    "x" * 129,
    "café",
]


def _api_refusal(**fields: str) -> str:
    """The message ``PUT /documents/{doc_id}`` answers for ``fields``."""
    from kbsearch.service.uploads import Upload

    upload = Upload(**{"doc_id": "ok", **fields, "filename": "f.md", "content": b"# T\n"})
    with pytest.raises(InvalidArgumentError) as refused:
        upload.check()
    return str(refused.value)


@pytest.mark.parametrize("doc_id", WRITTEN_IDS)
def test_a_written_doc_id_the_api_refuses_fails_its_file_with_the_api_message(
    tmp_path: Path, doc_id: str
) -> None:
    """Front matter and the inventory give ids as an upload's form does: the same rules
    (kbsearch.ingest.fields), the same message, one failed file and nothing else changed."""
    docs = write_files(
        tmp_path / "docs",
        {"good.md": "# Good\n\nFine text.\n", "kept.md": "# Kept\n\nStored before.\n"},
    )
    with _open(tmp_path) as kb:
        assert kb.index([docs]).added == 2
        (docs / "bad.md").write_text(
            f"---\ndoc_id: {json.dumps(doc_id)}\n---\n# T\n\nText.\n", encoding="utf-8"
        )
        (docs / "listed.md").write_text("# L\n\nListed text.\n", encoding="utf-8")
        (docs / "kept.md").write_text("# Kept\n\nChanged since.\n", encoding="utf-8")
        inventory = docs / "inventory.csv"
        with inventory.open("w", encoding="utf-8", newline="") as fh:
            row = {"file": "listed.md", "doc_id": doc_id}
            csv.writer(fh).writerows([COLUMNS, [row.get(c, "") for c in COLUMNS]])
        report = kb.index([docs], inventory=inventory)
        message = _api_refusal(doc_id=doc_id)
        assert _reasons(report) == {"bad.md": message, "listed.md": message}
        assert (report.updated, report.unchanged) == (1, 1)  # the others indexed as ever
        assert _ids(kb) == [("good", "1"), ("kept", "1")]


@pytest.mark.parametrize(
    ("line", "fields"),
    [
        ("version: 1 beta", {"version": "1 beta"}),
        ("access: everyone", {"access": "everyone"}),
        ("owner: " + "o" * 101, {"owner": "o" * 101}),
        ('title: "Refunds\\u202e"', {"title": "Refunds\u202e"}),
    ],
)
def test_written_metadata_the_api_refuses_fails_its_file_with_the_api_message(
    tmp_path: Path, line: str, fields: dict[str, str]
) -> None:
    docs = write_files(
        tmp_path / "docs",
        {"good.md": "# Good\n\nFine text.\n", "bad.md": f"---\n{line}\n---\n# T\n\nText.\n"},
    )
    with _open(tmp_path) as kb:
        report = kb.index([docs])
        assert _reasons(report) == {"bad.md": _api_refusal(**fields)}
        assert _ids(kb) == [("good", "1")]


def test_an_id_a_folder_gives_is_not_held_to_the_written_rules(tmp_path: Path) -> None:
    """A path's id (spaces, accents: a person's file names) is indexed as before."""
    docs = write_files(tmp_path / "docs", {"guide/Café menu.md": "# Menu\n\nCoffee.\n"})
    with _open(tmp_path) as kb:
        assert kb.index([docs]).ok
        assert _ids(kb) == [("guide/Café menu", "1")]


def test_an_inventory_never_publishes_a_page_labelled_staff(tmp_path: Path) -> None:
    docs = write_files(
        tmp_path / "docs",
        {
            "secret.md": "---\naccess: staff\n---\n# Secret\n\nThe vault code.\n",
            "open.md": "---\naccess: public\n---\n# Open\n\nOpening hours.\n",
            "inventory.csv": (
                "file,doc_id,title,version,effective_from,effective_to,owner,access,language,"
                "doc_type,format\nsecret.md,secret,,,,,,public,,,\nopen.md,open,,,,,,staff,,,\n"
            ),
        },
    )
    with _open(tmp_path) as kb:
        report = kb.index([docs], inventory=docs / "inventory.csv")
        assert "labels it staff-only" in _reasons(report)["secret.md"]
        # the safe way round is the inventory's to choose: open.md becomes staff-only
        assert [(d.document.doc_id, d.document.access) for d in kb.documents()] == [
            ("open", "staff")
        ]
