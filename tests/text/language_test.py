"""Language detection (py3langid): the answers kbsearch relied on with langdetect, on the first
``SAMPLE_CHARS`` characters only, with the model's large tables out of the cyclic garbage
collector's reach (a served process paid 150 to 200 ms per full collection for langdetect's)."""

from __future__ import annotations

import gc

from py3langid.langid import MODEL_FILE, LanguageIdentifier

from kbsearch.text import language
from kbsearch.text.language import LANGUAGES, SAMPLE_CHARS, detect_any, detect_language

ENGLISH = "The refund is sent to your card within two business days after we receive the item. "
FRENCH = "Le remboursement est envoyé sur votre carte sous deux jours ouvrés après réception. "


def test_detection_answers_as_before() -> None:
    assert detect_any("Combien coûte la livraison en Corse ?")[0] == "fr"  # type: ignore[index]
    assert detect_any("How long does delivery to Belgium take?")[0] == "en"  # type: ignore[index]
    assert detect_any("wie lange dauert die Lieferung nach Belgien")[0] == "de"  # type: ignore[index]
    assert detect_any("short") is None
    assert detect_language("Wie lange dauert die Lieferung nach Belgien?") in ("en", "fr")


def test_probabilities_are_a_distribution() -> None:
    lang, probability = detect_any(FRENCH)  # type: ignore[misc]
    assert lang == "fr" and 0.5 < probability <= 1.0
    ranked = language._identifier().rank(FRENCH)
    assert abs(sum(p for _, p in ranked) - 1.0) < 1e-4


def test_only_the_first_characters_are_read() -> None:
    text = ENGLISH * 4 + FRENCH * 40  # English for the first 340 characters, French after
    assert len(ENGLISH * 4) > SAMPLE_CHARS
    assert detect_language(text) == "en"
    assert detect_language(FRENCH * 40) == "fr"


def test_text_of_no_language_is_not_labelled() -> None:
    code = "x = f(y) + g[z] * 2; return {k: v for k, v in items} " * 8
    assert detect_language(code, default="fr") in ("en", "fr")
    found = detect_any(code)
    assert found is None or found[0] != "zxx"


def test_the_written_out_codes_are_the_models_labels() -> None:
    labels = set(LanguageIdentifier.from_model_file(MODEL_FILE).labels) - {"zxx"}
    assert labels == LANGUAGES
    assert {"en", "fr", "de", "es", "zh"} <= LANGUAGES


def test_model_tables_are_untracked() -> None:
    detect_any("Combien coûte la livraison en Corse ?")
    identifier = language._identifier()
    tables = [identifier.tk_output, identifier._rowbase]
    assert all(len(t) > 10_000 for t in tables)
    gc.collect()
    assert not any(gc.is_tracked(t) for t in tables)
    assert not any(
        gc.is_tracked(v) and len(v) > 1000  # type: ignore[arg-type]
        for v in (getattr(identifier, s) for s in type(identifier).__slots__)
        if isinstance(v, (list, dict, tuple))
    )
