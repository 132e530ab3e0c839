"""The settings record reads and writes the stored form kbsearch has always used."""

from __future__ import annotations

from kbsearch.store import IndexSettings


def test_settings_round_trip_in_their_stored_form() -> None:
    stored = {
        "analyzer": "stem",
        "section_level": 2,
        "passage_budget": 512,
        "overlap": 1,
        "embedder": "e5-int8",
        "embedder_spec": "e5-int8",
        "dim": 384,
        "query_prefix": "query: ",
        "passage_prefix": "passage: ",
    }
    assert IndexSettings.from_dict(stored).to_dict() == stored
    lexical = {k: stored[k] for k in ("analyzer", "section_level", "passage_budget", "overlap")}
    lexical["embedder_spec"] = "none"
    assert IndexSettings.from_dict(lexical).to_dict() == lexical
    assert not IndexSettings.from_dict(lexical).has_vectors
