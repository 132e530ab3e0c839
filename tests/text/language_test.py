"""Language detection keeps langdetect's answers, with its profile table out of the cyclic
garbage collector's reach (a served process paid 150 to 200 ms per full collection for it)."""

from __future__ import annotations

import gc

from langdetect import detector_factory

from kbsearch.text.language import detect_any, detect_language


def test_detection_answers_as_langdetect_does() -> None:
    assert detect_any("Combien coûte la livraison en Corse ?")[0] == "fr"  # type: ignore[index]
    assert detect_any("How long does delivery to Belgium take?")[0] == "en"  # type: ignore[index]
    assert detect_any("short") is None
    assert detect_language("Wie lange dauert die Lieferung nach Belgien?") in ("en", "fr")


def test_profile_rows_are_untracked_tuples() -> None:
    detect_any("Combien coûte la livraison en Corse ?")
    table = detector_factory._factory.word_lang_prob_map  # type: ignore[union-attr]
    assert len(table) > 10_000
    rows = list(table.values())
    assert all(type(row) is tuple for row in rows)
    gc.collect()
    assert not any(gc.is_tracked(row) for row in rows[:: max(1, len(rows) // 1000)])
