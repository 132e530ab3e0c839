"""The settings record reads and writes the stored form kbsearch has always used."""

from __future__ import annotations

from kbsearch.store import IndexSettings
from kbsearch.store.settings import LEGACY_PASSAGE_RULE, PASSAGE_RULE


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


def test_the_passage_rule_is_recorded_and_a_legacy_index_reads_as_legacy() -> None:
    new = IndexSettings()
    assert new.chunking == PASSAGE_RULE and new.section_level == 6
    assert new.to_dict()["chunking"] == PASSAGE_RULE
    assert IndexSettings.from_dict(new.to_dict()) == new
    legacy = IndexSettings.from_dict({"analyzer": "stem", "passage_budget": 512})
    assert legacy.chunking == LEGACY_PASSAGE_RULE and legacy.section_level == 2


def test_the_heading_weight_is_recorded_and_an_older_index_reads_weight_one() -> None:
    from kbsearch.store.settings import HEADING_WEIGHT

    new = IndexSettings()
    assert new.heading_weight == HEADING_WEIGHT > 1
    assert new.to_dict()["heading_weight"] == HEADING_WEIGHT
    assert IndexSettings.from_dict(new.to_dict()) == new
    older = IndexSettings.from_dict({"analyzer": "stem", "chunking": PASSAGE_RULE})
    assert older.heading_weight == 1 and "heading_weight" not in older.to_dict()
