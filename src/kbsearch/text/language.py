"""Language detection (py3langid: Marco Lui and Timothy Baldwin's langid.py, a naive Bayes
classifier over byte n-grams trained on 97 languages, its model shipped in the wheel).

Short texts are where detectors guess wrong (a two-line English note came out as Dutch), so a
guess outside the languages kbsearch analyses (``PREFERRED``) is only trusted on a text long
and clear enough; otherwise the best preferred candidate, or the default, is used.

Only the first ``SAMPLE_CHARS`` characters are read when they come out in a language of
``PREFERRED`` (otherwise the first ``MAX_CHARS``): the classifier walks its byte automaton in
Python, so its cost grows with the text, while a passage's language is settled well before
(``benchmarks/language.py``: the same labels as on whole passages on the four shared corpora,
and as langdetect gave; 0.3 ms instead of 5-10 ms a passage).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the model takes ~0.3 s to load: only when a text is detected
    from py3langid.langid import LanguageIdentifier

MIN_LETTERS = 20  # below this many letters a guess is noise; return the default
PREFERRED = ("en", "fr")  # the languages with a stemmer and an evaluation set
TRUST_LETTERS = 200  # a guess outside PREFERRED needs this many letters...
TRUST_PROBABILITY = 0.95  # ...and this probability
SAMPLE_CHARS = 300  # the characters read (cut at the next space)...
MAX_CHARS = 10_000  # ...unless they are not in PREFERRED: then up to this many (langdetect's)
CACHED_CHARS = 1_000  # a text this short (a query) is ranked once per process (_candidates)
CANDIDATE_PROBABILITY = 0.01  # a language below this probability is no candidate
NO_LANGUAGE = "zxx"  # py3langid's label for text of no language (code, numbers): no candidate
# the codes py3langid can return (its model's labels, less NO_LANGUAGE), written out so that
# checking a language a person types does not load the model
_CODES = (
    "ace af am an ar ary arz as az ba bcl be bg bn br bs ca crh cs cy da de dz el en eo es et "
    "eu ext fa fi fo fr fuv fy ga gcf gcr gd gl gom grc gu gug guw ha hbo he hi hr ht hu hy "
    "id ig is it ja jv ka kab kik kk km kn ko ku ky la lb lg lij ln lo lt ltg lv mg mk ml mn "
    "mr ms mt my ne nl nn no nso oc om or pa pcm pl ps pt qu ro ru rw sa sdh se si sk sl sn "
    "so sq sr st sv sw ta te tg th tk tl tr tt ug uk ur uz uzs vec vi vo wa wuu xh yo yue zh "
    "zu"
)
LANGUAGES = frozenset(_CODES.split())


def detect_any(text: str) -> tuple[str, float] | None:
    """The most likely of all py3langid's 97 languages for ``text`` and its probability (the
    ISO 639-1 code; probabilities of all languages sum to 1, softmax of the naive Bayes
    log-posteriors at temperature sqrt(bytes), py3langid's calibration), or ``None`` when the
    text has fewer than ``MIN_LETTERS`` letters. Unlike :func:`detect_language` it prefers no
    language: a short German question comes out as German, not as the best of ``PREFERRED``.
    Deterministic."""
    candidates = _candidates(text, letters(text))
    return candidates[0] if candidates else None


def letters(text: str) -> int:
    """How many characters of ``text`` are letters (``str.isalpha``)."""
    return sum(map(str.isalpha, text))


def _sample(text: str) -> str:
    """The first ``SAMPLE_CHARS`` characters of ``text``, up to the next space (a word is not
    cut into n-grams it does not have)."""
    if len(text) <= SAMPLE_CHARS:
        return text
    end = text.find(" ", SAMPLE_CHARS)
    return text if end < 0 else text[:end]


def _candidates(text: str, count: int) -> list[tuple[str, float]]:
    """``(language, probability)`` of each language of probability at least
    ``CANDIDATE_PROBABILITY`` for ``text`` (of ``count`` letters), most likely first; empty
    below ``MIN_LETTERS`` letters. A text of at most :data:`CACHED_CHARS` characters (a
    query, which :func:`detect_any` and :func:`detect_language` both read) is ranked once
    per process."""
    if count < MIN_LETTERS:
        return []
    if len(text) <= CACHED_CHARS:
        return list(_short_candidates(text))
    return _ranked(text)


@lru_cache(maxsize=1024)
def _short_candidates(text: str) -> tuple[tuple[str, float], ...]:
    return tuple(_ranked(text))


def _ranked(text: str) -> list[tuple[str, float]]:
    sample = _sample(text)
    ranked = _identifier().rank(sample)
    if ranked[0][0] not in PREFERRED and len(sample) < len(text):
        # a beginning in another language or script (a name in Cyrillic, a quotation): the
        # whole text decides, at its full cost, which only such passages pay
        ranked = _identifier().rank(text[:MAX_CHARS])
    found = [(lang, p) for lang, p in ranked if p >= CANDIDATE_PROBABILITY and lang != NO_LANGUAGE]
    return found or [(lang, p) for lang, p in ranked[:2] if lang != NO_LANGUAGE][:1]


_identifier_lock = threading.Lock()
_loaded: list[LanguageIdentifier] = []


def _identifier() -> LanguageIdentifier:
    """py3langid's identifier with normalised probabilities, loaded once per process. Its
    automaton's two per-state tables (~105,000 entries each) come as lists; they are made
    tuples of ints, which the cyclic garbage collector leaves untracked after their first
    collection (a list is walked at every full collection: 150 to 200 ms each in a served
    index under load for langdetect's profile rows, every ~2 s: the p99 of
    ``http_load.py``). The model comes memory-mapped from its unpacked copy in the cache
    (:mod:`kbsearch.text.langid_model`: ~0.8 s of CPU less per process)."""
    if _loaded:
        return _loaded[0]
    with _identifier_lock:
        if not _loaded:
            from .langid_model import load_identifier

            identifier = load_identifier(norm_probs=True)
            identifier.tk_output = tuple(identifier.tk_output)
            identifier._rowbase = tuple(identifier._rowbase)
            _loaded.append(identifier)
    return _loaded[0]


def prepare() -> None:
    """Load the language identifier now (once per process; ~0.03 s of CPU from its unpacked
    copy), so the first text detected does not pay for it."""
    _identifier()


def detect_language(text: str, default: str = "en") -> str:
    """The ISO 639-1 code of ``text``'s language (``"en"``, ``"fr"``...), or ``default`` when
    the text has fewer than ``MIN_LETTERS`` letters or no language of ``PREFERRED`` is a
    candidate. A language outside ``PREFERRED`` is returned only for a text of
    ``TRUST_LETTERS`` letters detected with probability ``TRUST_PROBABILITY``.
    Deterministic."""
    count = letters(text)
    candidates = _candidates(text, count)
    if not candidates:
        return default
    best, probability = candidates[0]
    if best in PREFERRED:
        return best
    if probability >= TRUST_PROBABILITY and count >= TRUST_LETTERS:
        return best
    return next((lang for lang, _ in candidates if lang in PREFERRED), default)
