"""Language detection (langdetect, a port of Nakatani Shuyo's language-detection library).

Short texts are where detectors guess wrong (a two-line English note came out as Dutch), so a
guess outside the languages kbsearch analyses (``PREFERRED``) is only trusted on a text long
and clear enough; otherwise the best preferred candidate, or the default, is used.
"""

from __future__ import annotations

import threading

from langdetect import DetectorFactory, detect_langs, detector_factory
from langdetect.lang_detect_exception import LangDetectException

MIN_LETTERS = 20  # below this many letters a guess is noise; return the default
PREFERRED = ("en", "fr")  # the languages with a stemmer and an evaluation set
TRUST_LETTERS = 200  # a guess outside PREFERRED needs this many letters...
TRUST_PROBABILITY = 0.95  # ...and this probability


def detect_any(text: str) -> tuple[str, float] | None:
    """The most likely of all langdetect's languages for ``text`` and its probability (the
    ISO 639-1 code, a region cut off), or ``None`` when the text has fewer than
    ``MIN_LETTERS`` letters or detection fails. Unlike :func:`detect_language` it prefers no
    language: a short German question comes out as German, not as the best of ``PREFERRED``.
    Deterministic: langdetect's seed is fixed to 0 before each call."""
    candidates = _candidates(text)
    return candidates[0] if candidates else None


def _candidates(text: str) -> list[tuple[str, float]]:
    """langdetect's ``(language, probability)`` candidates for ``text``, most likely first;
    empty below ``MIN_LETTERS`` letters or when detection fails."""
    if sum(ch.isalpha() for ch in text) < MIN_LETTERS:
        return []
    _load_profiles()
    DetectorFactory.seed = 0
    try:
        return [(c.lang.split("-", 1)[0].lower(), c.prob) for c in detect_langs(text)]
    except LangDetectException:
        return []


_profiles_lock = threading.Lock()
_profiles_ready = False


def _load_profiles() -> None:
    """Load langdetect's profiles once per process, with each n-gram's probability row (a list
    of 55 floats, ~87,000 of them) made a tuple. langdetect only indexes those rows; as lists
    they are containers the cyclic garbage collector walks at every full collection (150 to
    200 ms each in a served index under load, every ~2 s: the p99 of ``http_load.py``), while
    a tuple of floats is untracked after its first collection."""
    global _profiles_ready
    if _profiles_ready:
        return
    with _profiles_lock:
        if not _profiles_ready:
            detector_factory.init_factory()
            table = detector_factory._factory.word_lang_prob_map
            for ngram, row in table.items():
                table[ngram] = tuple(row)
            _profiles_ready = True


def detect_language(text: str, default: str = "en") -> str:
    """The ISO 639-1 code of ``text``'s language (``"en"``, ``"fr"``...), or ``default`` when
    the text has fewer than ``MIN_LETTERS`` letters or detection fails. A language outside
    ``PREFERRED`` is returned only for a text of ``TRUST_LETTERS`` letters detected with
    probability ``TRUST_PROBABILITY``. Deterministic: langdetect's seed is fixed to 0 before
    each call. Codes with a region (``zh-cn``) are cut to the language part."""
    candidates = _candidates(text)
    if not candidates:
        return default
    letters = sum(ch.isalpha() for ch in text)
    best, probability = candidates[0]
    if best in PREFERRED:
        return best
    if letters >= TRUST_LETTERS and probability >= TRUST_PROBABILITY:
        return best
    return next((lang for lang, _ in candidates if lang in PREFERRED), default)
