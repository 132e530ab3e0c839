from __future__ import annotations

import uuid
from datetime import date

import numpy as np
import pytest

from kbsearch.backends.qdrant.points import (
    OPEN_FROM,
    OPEN_TO,
    POINT_NAMESPACE,
    passage_points,
    payload,
    point_id,
    text_hash,
)
from kbsearch.backends.qdrant.sparse import SparseWeights
from kbsearch.records import Document, Passage

DOC = Document("returns", "2", "Returns", "fr", "staff", date(2026, 4, 1), None)
PASSAGE = Passage("returns@v2#window", "returns", "2", "Window", "text", "Retour 45 jours", 0)


def test_point_id_is_the_uuid5_of_the_passage_id() -> None:
    pid = point_id("returns@v2#window")
    assert pid == str(uuid.uuid5(POINT_NAMESPACE, "returns@v2#window"))
    assert uuid.UUID(pid).version == 5
    assert point_id("returns@v2#window") == pid
    assert point_id("returns@v2#window-2") != pid


def test_payload_carries_every_filter_field_with_day_numbers() -> None:
    got = payload(DOC, PASSAGE)
    assert got == {
        "passage_id": "returns@v2#window",
        "text_hash": text_hash("Retour 45 jours"),
        "doc_id": "returns",
        "version": "2",
        "access": "staff",
        "language": "fr",
        "from_day": date(2026, 4, 1).toordinal(),
        "to_day": OPEN_TO,
    }
    open_doc = Document("d", "1", "T", "en", "public")
    assert payload(open_doc, PASSAGE)["from_day"] == OPEN_FROM


def test_passage_points_align_and_refuse_misaligned_inputs() -> None:
    sparse = [SparseWeights.from_body("retour jour")]
    points = passage_points(DOC, [PASSAGE], sparse, np.ones((1, 4), dtype=np.float32))
    assert [p.passage_id for p in points] == ["returns@v2#window"]
    assert points[0].id == point_id("returns@v2#window")
    assert not points[0].public
    assert points[0].dense is not None and points[0].dense.shape == (4,)
    with pytest.raises(ValueError):
        passage_points(DOC, [PASSAGE], [], None)
    with pytest.raises(ValueError):
        passage_points(DOC, [PASSAGE], sparse, np.ones((2, 4)))
