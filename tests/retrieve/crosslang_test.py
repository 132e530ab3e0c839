"""Which candidates are cross-language: only where the search can return several languages,
the query is long enough to detect, and its language is one of them."""

from __future__ import annotations

import pytest

from kbsearch.retrieve import crosslang
from kbsearch.retrieve.crosslang import (
    LANGUAGE_BOUND,
    is_cross_language,
    not_applicable,
    query_language,
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


GERMAN = "wie lange dauert die Lieferung nach Belgien"
SPANISH = "¿cuánto tarda la entrega a Bélgica?"
MIXED = "combien de temps does shipping take"  # es 0.43, en 0.43: no language is confident
SHORT = "Do you deliver to Corsica?"  # en 0.67, pcm 0.06: unsure on a short question


def test_a_third_language_marks_nothing_and_an_unsure_detection_falls_back() -> None:
    # a confidently detected third language: nothing is marked
    assert query_language_among(GERMAN, ["en", "fr"]) is None
    assert query_language_among(SPANISH, ["en", "fr"]) is None
    # unsure: the en/fr-preferring detection, when it is one of the visible languages
    assert query_language_among(SHORT, ["en", "fr"]) == "en"
    assert query_language_among(SHORT, ["de", "fr"]) is None
    assert query_language_among(MIXED, ["en", "fr"]) == query_language(MIXED)
    assert query_language_among(MIXED, ["de", "nl"]) is None
    assert query_language_among(GERMAN, ["de", "en"]) == "de"
    assert query_language_among(SPANISH, ["en", "es", "fr"]) == "es"
    assert query_language_among("the délais de livraison for Belgium", ["en", "fr"]) == "fr"


def test_a_monolingual_index_detects_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str) -> None:
        raise AssertionError(f"detected {text!r}")

    monkeypatch.setattr(crosslang, "detect_any", refuse)
    crosslang._detected.cache_clear()
    assert query_language_among("a question never seen before in any test", ["en"]) is None
    assert query_language_among("a question never seen before in any test", []) is None
