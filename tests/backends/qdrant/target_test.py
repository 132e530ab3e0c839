"""Where an index's Qdrant collection lives: the recorded settings, and the dense search mode
(exact up to a size by default; an index recorded before keeps its exact search)."""

from __future__ import annotations

import pytest

from kbsearch.backends.qdrant.target import QdrantTarget
from kbsearch.errors import InvalidArgumentError


def test_a_new_target_searches_exactly_up_to_a_size() -> None:
    target = QdrantTarget(path="/tmp/kb-edge")
    assert target.exact is None and target.hnsw_ef is None
    assert target.settings()["exact"] is None
    assert QdrantTarget.from_settings(target.settings()) == target


RECORDED = [({}, True), ({"exact": True}, True), ({"exact": False}, False), ({"exact": None}, None)]


@pytest.mark.parametrize("recorded, exact", RECORDED)
def test_a_recorded_target_keeps_its_search_mode(recorded: dict, exact: bool | None) -> None:
    """An index recorded before the default changed (``exact`` true, or no key) stays exact."""
    target = QdrantTarget.from_settings({"path": "/tmp/kb-edge", **recorded})
    assert target.exact is exact


def test_hnsw_ef_must_be_positive() -> None:
    with pytest.raises(InvalidArgumentError, match="hnsw_ef must be positive"):
        QdrantTarget(path="/tmp/kb-edge", hnsw_ef=0)
