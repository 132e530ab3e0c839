"""Language detection: kbsearch's detector (py3langid) beside the langdetect one it replaced,
on the same texts, in one run.

    pip install langdetect   # the reference only; kbsearch no longer needs it
    python benchmarks/language.py ../shared/data [--every 1]

For each BEIR folder under the given one (``corpus.jsonl``, ``queries.jsonl``): the language of
each passage (``title`` + newline + ``text``, as ingestion detects a document without a
declared language) by both detectors, how many labels differ, and CPU milliseconds per
passage of each with their ratio; then each query's :func:`detect_language` and cross-language
decision (``query_language_among(query, ["en", "fr"])``, :mod:`kbsearch.retrieve.crosslang`)
by both. The reference is the code of ``kbsearch.text.language`` before the switch (langdetect
1.0.9, seed 0, the same ``PREFERRED``/``TRUST_*`` rules, crosslang's thresholds for it: 0.7
and 0.9).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kbsearch.retrieve import crosslang  # noqa: E402
from kbsearch.text import language  # noqa: E402


def _reference() -> tuple[Callable[[str], str], Callable[[str], tuple[str, float] | None]]:
    """(detect_language, detect_any) as kbsearch had them on langdetect."""
    from langdetect import DetectorFactory, detect_langs
    from langdetect.lang_detect_exception import LangDetectException

    def candidates(text: str) -> list[tuple[str, float]]:
        if sum(ch.isalpha() for ch in text) < language.MIN_LETTERS:
            return []
        DetectorFactory.seed = 0
        try:
            return [(c.lang.split("-", 1)[0].lower(), c.prob) for c in detect_langs(text)]
        except LangDetectException:
            return []

    def detect_language(text: str, default: str = "en") -> str:
        found = candidates(text)
        if not found:
            return default
        best, probability = found[0]
        if best in language.PREFERRED:
            return best
        letters = sum(ch.isalpha() for ch in text)
        if letters >= language.TRUST_LETTERS and probability >= language.TRUST_PROBABILITY:
            return best
        return next((lang for lang, _ in found if lang in language.PREFERRED), default)

    def detect_any(text: str) -> tuple[str, float] | None:
        found = candidates(text)
        return found[0] if found else None

    return detect_language, detect_any


OLD_CONFIDENT, OLD_FOREIGN = 0.7, 0.9  # crosslang's thresholds for langdetect's probabilities


def old_among(
    queries: list[str],
    detect_language: Callable[[str], str],
    detect_any: Callable[[str], tuple[str, float] | None],
) -> list[str | None]:
    """``crosslang.query_language_among(q, ["en", "fr"])`` of each query with the reference
    detectors and thresholds (crosslang's globals swapped for the call, its caches cleared)."""
    saved = {
        name: getattr(crosslang, name)
        for name in ("detect_any", "detect_language", "CONFIDENT", "FOREIGN")
    }
    swapped = (detect_any, detect_language, OLD_CONFIDENT, OLD_FOREIGN)
    try:
        for name, value in zip(saved, swapped, strict=True):
            setattr(crosslang, name, value)
        crosslang._detected.cache_clear()
        crosslang.query_language.cache_clear()
        return [crosslang.query_language_among(q, ["en", "fr"]) for q in queries]
    finally:
        for name, value in saved.items():
            setattr(crosslang, name, value)
        crosslang._detected.cache_clear()
        crosslang.query_language.cache_clear()


def cpu_ms(func: Callable[[str], object], texts: list[str]) -> tuple[list[object], float]:
    start = time.process_time()
    out = [func(t) for t in texts]
    return out, (time.process_time() - start) * 1000 / max(1, len(texts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="a folder of BEIR folders")
    parser.add_argument("--every", type=int, default=1, help="read every n-th passage")
    args = parser.parse_args()
    old_language, old_any = _reference()
    old_language("warm up both detectors' models")
    language.detect_language("warm up both detectors' models")
    total_old = total_new = 0.0
    total = 0
    print("dataset        passages  changed  langdetect ms  py3langid ms  ratio  labels (new)")
    for folder in sorted(p for p in args.data.iterdir() if (p / "corpus.jsonl").is_file()):
        rows = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")]
        texts = [f"{r.get('title', '')}\n{r.get('text', '')}" for r in rows][:: args.every]
        old, old_ms = cpu_ms(old_language, texts)
        new, new_ms = cpu_ms(language.detect_language, texts)
        changed = sum(a != b for a, b in zip(old, new, strict=True))
        total += len(texts)
        total_old += old_ms * len(texts)
        total_new += new_ms * len(texts)
        labels = dict(Counter(new).most_common(3))
        print(
            f"{folder.name:14} {len(texts):8} {changed:8} {old_ms:14.2f} {new_ms:13.3f}"
            f" {old_ms / new_ms:6.1f}  {labels}"
        )
        queries = [json.loads(line)["text"] for line in (folder / "queries.jsonl").open()]
        q_old = [old_language(q) for q in queries]
        q_new = [language.detect_language(q) for q in queries]
        x_old = old_among(queries, old_language, old_any)
        x_new = [crosslang.query_language_among(q, ["en", "fr"]) for q in queries]
        print(
            f"{'':14} queries {len(queries)}: detect_language changed"
            f" {sum(a != b for a, b in zip(q_old, q_new, strict=True))},"
            f" query_language_among(en, fr) changed"
            f" {sum(a != b for a, b in zip(x_old, x_new, strict=True))}"
            f" (old {dict(Counter(x_old))}, new {dict(Counter(x_new))})"
        )
    print(
        f"all            {total:8}          {total_old / total:14.2f}"
        f" {total_new / total:13.3f} {total_old / total_new:6.1f}"
    )


if __name__ == "__main__":
    main()
