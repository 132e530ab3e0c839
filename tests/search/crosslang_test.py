"""Which candidates are cross-language: only where the search can return several languages,
the query is long enough to detect, and its language is one of them."""

from __future__ import annotations

from kbsearch.search.crosslang import (
    LANGUAGE_BOUND,
    is_cross_language,
    not_applicable,
    query_language_among,
)

ENGLISH = "how long does delivery to Belgium take"
FRENCH = "Ma carte cadeau est valable combien de temps ?"


def test_query_language_is_known_only_where_it_tells_candidates_apart() -> None:
    assert query_language_among(ENGLISH, ["en", "fr"]) == "en"
    assert query_language_among(FRENCH, ["en", "fr"]) == "fr"
    assert query_language_among(ENGLISH, ["en"]) is None  # one language: nothing to tell apart
    assert query_language_among(FRENCH, ["en"]) is None
    assert query_language_among(ENGLISH, ["de", "fr"]) is None  # not one of the languages
    assert query_language_among("retours 30 jours", ["en", "fr"]) is None  # too short


def test_cross_language_passages_have_the_lexical_route_out_of_reach() -> None:
    assert {"lexical"} == LANGUAGE_BOUND
    assert is_cross_language("en", "fr") and not is_cross_language("en", "en")
    assert not is_cross_language(None, "fr")
    languages = {"a": "en", "b": "fr", "c": "fr"}
    assert not_applicable("en", languages) == {"b": LANGUAGE_BOUND, "c": LANGUAGE_BOUND}
    assert not_applicable("fr", languages) == {"a": LANGUAGE_BOUND}
    assert not_applicable(None, languages) == {}
