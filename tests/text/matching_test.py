"""Word matching: a passage word matches a query word by its folded form or its stem, in
the languages given; the match is the same as a per-token reference, cached or not."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kbsearch.text.analysis import STEMMER_LANGUAGES
from kbsearch.text.matching import TOKEN, _keys, match_spans, query_keys, sentence_spans


def test_sentence_spans_cut_after_clauses_or_full_stops_only() -> None:
    text = "  One; two: three. Four!\nFive  "
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        "One;",
        "two:",
        "three.",
        "Four!",
        "Five",
    ]
    assert [text[s:e] for s, e in sentence_spans(text, clauses=False)] == [
        "One; two: three.",
        "Four!",
        "Five",
    ]


def per_token_matches(text: str, query: str, languages: tuple[str, ...]) -> list[tuple]:
    """The reference: every word of ``text`` looked up key by key, in its keys' order."""
    keys = query_keys(query, languages)
    langs = tuple(lang for lang in languages if lang in STEMMER_LANGUAGES) or ("en",)
    found = []
    for m in TOKEN.finditer(text):
        hit = next((keys[k] for k in _keys(m.group(), langs) if k in keys), None)
        if hit is not None:
            found.append((m.start(), m.end(), hit))
    return found


@pytest.mark.parametrize(
    ("text", "query", "languages"),
    [
        ("Livraisons livrées; livraison. Delivered!", "livraison delivery", ("fr", "en")),
        ("Œuvre oeuvre ŒUVRE. Café cafe CAFÉ", "œuvre café", ("fr",)),
        ("Running runs ran; the runner", "run running", ("en",)),
        ("Nothing here matches", "absent words", ("en", "fr")),
    ],
)  # fmt: skip
def test_match_spans_equal_the_per_token_reference(
    text: str, query: str, languages: tuple[str, ...]
) -> None:
    expected = per_token_matches(text, query, languages)
    assert match_spans(text, query_keys(query, languages), languages) == expected
    assert match_spans(text, query_keys(query, languages), languages) == expected  # cached


@given(st.text(alphabet="abcé éèLlivraisonsRun.;\n", max_size=120), st.text(max_size=30))
def test_match_spans_equal_the_reference_on_any_text(text: str, query: str) -> None:
    for languages in (("en",), ("fr", "en")):
        expected = per_token_matches(text, query, languages)
        assert match_spans(text, query_keys(query, languages), languages) == expected


def test_new_query_words_do_not_fill_the_passage_word_cache() -> None:
    """A server that sees every query text new (a counter word each) keeps no entry per query
    word in the cache of passage words' keys: it grew ~40 MB over 10 minutes so."""
    before = _keys.cache_info().currsize
    for i in range(200):
        assert query_keys(f"parcel refund zq{i}x", ["en", "fr"])
    assert _keys.cache_info().currsize == before


def test_every_cache_keyed_by_query_holds_as_many_queries_as_the_vector_cache() -> None:
    """Each cache of a query's analyses holds :data:`QUERY_CACHE` queries, as many as the
    query vectors: ~7 KB a query in all, so a server that sees only new texts levels off."""
    from kbsearch.retrieve import crosslang, encoder
    from kbsearch.text import analysis, matching
    from kbsearch.text.analysis import QUERY_CACHE

    caches = [
        analysis._query_terms,
        analysis._word_terms,
        matching._query_keys,
        crosslang.query_language,
        crosslang._detected,
    ]
    assert {c.cache_parameters()["maxsize"] for c in caches} == {QUERY_CACHE}
    assert encoder.CACHE_SIZE == QUERY_CACHE
