"""Language detection (langdetect, a port of Nakatani Shuyo's language-detection library)."""

from __future__ import annotations

from langdetect import DetectorFactory, detect
from langdetect.lang_detect_exception import LangDetectException

MIN_LETTERS = 20  # below this many letters a guess is noise; return the default


def detect_language(text: str, default: str = "en") -> str:
    """The ISO 639-1 code of ``text``'s language (``"en"``, ``"fr"``...), or ``default`` when
    the text has fewer than ``MIN_LETTERS`` letters or detection fails. Deterministic:
    langdetect's seed is fixed to 0 before each call. Codes with a region (``zh-cn``) are cut
    to the language part."""
    if sum(ch.isalpha() for ch in text) < MIN_LETTERS:
        return default
    DetectorFactory.seed = 0
    try:
        code = detect(text)
    except LangDetectException:
        return default
    return code.split("-", 1)[0].lower() or default
