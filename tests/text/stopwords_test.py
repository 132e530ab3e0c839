"""Query-side French elision and stop words."""

from __future__ import annotations

from kbsearch.text.analysis import words
from kbsearch.text.stopwords import content_words, is_stopword, strip_elisions


def test_elisions_straight_and_typographic() -> None:
    assert strip_elisions("l'activer d’adresse qu’est-ce n'a J'ai s'inscrire") == (
        "activer adresse est-ce a ai inscrire"
    )
    assert strip_elisions("jusqu'à lorsqu'il c'est m'appeler t'inscrire") == (
        "à il est appeler inscrire"
    )
    # not an elision: no letter after the apostrophe, or a longer word before it
    assert strip_elisions("l' O'Neil aujourd'hui") == "l' O'Neil aujourd'hui"


def test_issue_example_keeps_only_content_words() -> None:
    query = "Mon serveur n'a pas d'adresse IPv6, comment l'activer ?"
    kept = content_words(words(strip_elisions(query)), ["fr", "en"])
    assert kept == ["serveur", "adresse", "ipv6", "activer"]


def test_english_questions_and_contractions() -> None:
    kept = content_words(
        words("How many days do I have to send something back? I don't know"), ["en"]
    )
    assert kept == ["many", "days", "send", "something", "back", "know"]


def test_accents_and_case_ignored() -> None:
    assert is_stopword("Été", ["fr"]) and is_stopword("ete", ["fr"]) and is_stopword("A", ["fr"])
    assert not is_stopword("été", ["en"]) and not is_stopword("ipv6", ["fr", "en"])
    assert not is_stopword("the", ["de"])  # a language without a list has no stop words


def test_all_stopwords_query_is_kept_whole() -> None:
    assert content_words(["what", "is", "it"], ["en"]) == ["what", "is", "it"]
    assert content_words([], ["en"]) == []


# issue 22 (RediSearch#3080): an acronym was lower-cased before the stop-word list
def test_an_all_capitals_word_of_two_letters_or_more_is_a_content_word() -> None:
    from kbsearch.text.analysis import Analyzer, content_query_words

    assert content_query_words("IT helpdesk hours") == ["it", "helpdesk", "hours"]
    assert content_query_words("contact IT") == ["contact", "it"]
    assert content_query_words("is it open") == ["open"]  # lower case: a stop word
    assert content_query_words("It is open") == ["open"]  # capitalised: still one
    assert content_query_words("How do I return an item") == ["return", "item"]  # "I": 1 letter
    assert content_query_words("ON or OFF AT night") == ["on", "off", "at", "night"]
    # a query written all in capitals is shouted, not made of acronyms
    assert content_query_words("HOW DO I RETURN AN ITEM") == ["return", "item"]
    assert Analyzer("plain").query_terms("IT helpdesk hours", ["en"]) == ["it", "helpdesk", "hours"]
    assert Analyzer("stem").word_terms("contact IT", ["en"]) == [("contact",), ("it",)]
