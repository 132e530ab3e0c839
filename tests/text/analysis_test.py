"""Ligatures are folded on both sides: ``oeuvre`` finds ``main-d'œuvre`` and the reverse."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import write_files

import kbsearch
from kbsearch.records import Filters
from kbsearch.text.analysis import Analyzer, fold_ligatures, words


def test_fold_ligatures() -> None:
    assert fold_ligatures("Œuvre, vœux, ex æquo, Æsop, Straße") == (
        "OEuvre, voeux, ex aequo, AEsop, Strasse"
    )
    assert words("main-d'œuvre") == ["main", "d", "oeuvre"]


@pytest.mark.parametrize("analyzer", ["stem", "plain"])
@pytest.mark.parametrize(
    ("written", "query"),
    [
        ("Le coût de la main-d'œuvre augmente.", "oeuvre"),
        ("Nos meilleurs vœux pour l'année.", "voeux"),
        ("Les deux équipes finissent ex æquo.", "ex aequo"),
        ("Le coût de la main-d'oeuvre augmente.", "œuvre"),
        ("Nos meilleurs voeux pour l'année.", "vœux"),
    ],
)
def test_ligature_spellings_find_each_other(
    tmp_path: Path, analyzer: str, written: str, query: str
) -> None:
    docs = write_files(
        tmp_path / "docs",
        {
            "note.fr.md": f"---\naccess: public\n---\n# Note\n\n{written}\n",
            "other.fr.md": "---\naccess: public\n---\n# Autre\n\nRien à voir ici.\n",
        },
    )
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        kb.index([docs], analyzer=analyzer)
        hits = kb.search(query, route="lexical", filters=Filters(language="fr"))
        assert [h.doc_id for h in hits] == ["note.fr"]


def test_body_of_plain_analyzer_is_folded() -> None:
    assert Analyzer("plain").body("vœux", "fr") == "voeux"


def test_a_language_without_a_stemmer_is_searched_by_its_words() -> None:
    """Its passages are indexed unstemmed, so its query terms are the words themselves (a
    German staff note was unreachable: 'wasserkocher' was searched as English 'wasserkoch')."""
    stem = Analyzer("stem")
    assert stem.query_terms("Wasserkocher", ["de"]) == ["wasserkocher"]
    assert stem.query_terms("kettles", ["en", "de"]) == ["kettl", "kettles"]
    assert stem.query_terms("kettles", []) == ["kettl"]


def test_a_document_in_a_language_without_a_stemmer_is_found(tmp_path: Path) -> None:
    docs = write_files(
        tmp_path / "docs",
        {
            "a.md": "---\naccess: public\n---\n# Kettle\n\n## Care\n\nDescale the kettle.\n",
            "b.md": "---\naccess: staff\nlanguage: de\n---\n# Notiz\n\n## Geräte\n\n"
            "Den Wasserkocher monatlich entkalken.\n",
        },
    )
    with kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder="none") as kb:
        kb.index([docs])
        for lang in (None, "de"):
            hits = kb.search(
                "Wasserkocher", route="lexical", filters=Filters(audience="staff", language=lang)
            )
            assert [h.passage_id for h in hits] == ["b@v1#gerate"]
        assert kb.search("Wasserkocher", route="lexical", filters=Filters()) == []


# issue 22 (basic-memory#1269): soft hyphen, zero-width space, word joiner and the other
# invisible characters split a query word, although documents are cleaned of them
# U+034F and U+180E: a breaker's find ("pass\u034fword" found nothing)
INVISIBLE = [
    "\u00ad",
    "\u034f",
    "\u180e",
    "\u200b",
    "\u200c",
    "\u200d",
    "\u200e",
    "\u2060",
    "\ufeff",
    "\u202e",  # a right-to-left override: shown text reordered ("Trojan Source")
    "\u2066",  # a left-to-right isolate
]


@pytest.mark.parametrize("mark", INVISIBLE)
def test_queries_and_documents_are_cleaned_by_one_function(mark: str) -> None:
    from kbsearch.ingest.text import normalize
    from kbsearch.text.analysis import clean_text

    written = f"pass{mark}word re{mark}set"
    assert clean_text(written) == "password reset" == normalize(written)
    assert words(written) == ["password", "reset"]
    for name in ("plain", "stem"):
        assert Analyzer(name).query_terms(f"pass{mark}word", ["en"]) == (
            Analyzer(name).query_terms("password", ["en"])
        )


@pytest.mark.parametrize("route", ["lexical", "hybrid"])
@pytest.mark.parametrize("mark", INVISIBLE)
def test_an_invisible_character_inside_a_query_word_still_finds_it(
    tmp_path: Path, mark: str, route: str
) -> None:
    from support import FakeEmbedder

    docs = write_files(
        tmp_path / "docs",
        {
            "login.md": "---\naccess: public\n---\n# Login\n\nChange your password here.\n",
            "other.md": "---\naccess: public\n---\n# Parcels\n\nParcels travel by courier.\n",
        },
    )
    kb = kbsearch.open_kb(tmp_path / "kb.db", create=True, embedder=FakeEmbedder())
    assert kb.index([docs]).ok
    hits = kb.search(f"pass{mark}word", route=route, filters=Filters())
    assert hits and hits[0].doc_id == "login"
    plain = kb.search("password", route=route, filters=Filters())
    assert [(h.passage_id, h.score) for h in hits] == [(h.passage_id, h.score) for h in plain]


@pytest.mark.parametrize("name", ["stem", "plain"])
def test_the_heading_lines_count_heading_weight_times(name: str) -> None:
    """A passage's text opens with its title and heading path, then a blank line
    (:mod:`kbsearch.index.chunking`); the FTS5 body repeats them ``heading_weight`` times in
    all, so an FAQ entry's question weighs more than a word of its answer."""
    text = "Refund policy\nReturns\n\nWe send a refund within 30 days."
    once = Analyzer(name).body(text, "en").lower().split()
    twice = Analyzer(name, heading_weight=2).body(text, "en").lower().split()
    assert once.count("refund") == 2 and twice.count("refund") == 3
    assert twice.count("return" if name == "stem" else "returns") == 2
    assert twice.count("30") == 1  # the body's words once


def test_a_text_without_heading_lines_is_unchanged_by_the_weight() -> None:
    text = "Kettle notice: stop using the kettle."
    assert Analyzer("stem", heading_weight=3).body(text, "en") == Analyzer("stem").body(text, "en")


def test_a_heading_weight_under_one_is_refused() -> None:
    with pytest.raises(ValueError, match="heading weight"):
        Analyzer("stem", heading_weight=0)
