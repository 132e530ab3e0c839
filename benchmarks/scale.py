"""What the lexical route costs as the collection grows (issue 23's table), in CPU time.

    nice -n 10 python benchmarks/scale.py --data /work/shared/data --sizes 10000 100000 \\
        [--work /tmp/kbscale] [--src OTHER/src ...] [--queries 200] [--replicate 10] \\
        [--only search write serve] [--check-lists]

Builds (once, kept under ``--work``) collections of N passages, lexical only (``--embedder
none``, the stem analyzer): realistic EN and FR text recombined from the BEIR corpora under
``--data`` (scifact, covid_faq_en, piaf_fr, spf_qr_fr: each passage a title, a heading and
about 60 words cut from a random abstract or paragraph of one language), ten passages per
document, a fifth of the documents staff-only, a tenth with an effective date range. The store
is written directly through :meth:`kbsearch.store.documents.Documents.write` with the analyzer's
bodies, as the indexer writes them (the CLI would take hours at 1M). With ``--replicate R``, a
size is built instead as R copies of the size / R collection inside SQLite (:func:`replicate`:
minutes for 1M where the direct build takes hours on the shared machine).

Then, for each ``--src`` (a ``src`` folder of kbsearch; default: the one importable here),
each cost is measured in a fresh process on a copy of the collection, so every code base reads
the same file:

- ``cold first search``: CPU of the first lexical search after opening (public audience);
- ``one-document write``: CPU of ``KnowledgeBase.index`` of one new Markdown file (ten
  sections) in a process that has searched the ``--queries`` and written once before (a
  server's steady state; the first write is printed apart), then ``first search after that
  write``, then ``searches after the writes``: p50/p95 of the queries searched before, each
  run once at the new generation (what a server's readers pay after a write);
- ``serve start-up``: CPU of :class:`kbsearch.service.engine.Engine` until its background
  snapshot (everything a search reads) is served, then one search through it;
- ``peak RSS``: of the search process after the warm queries (``ru_maxrss``);
- ``warm p50``: CPU per lexical search over ``--queries`` queries of the corpora (each run
  once before, so its postings are read), p50 and p95.

With two ``--src`` and ``--check-lists``, each code base also writes every query's lexical
hits under four settings (:data:`LISTS`), before and after a one-document write, and the
lists are compared (ids, order, scores to 1e-9 and bit for bit).

CPU time (``time.process_time``) rather than wall time: the machine is shared. Each process
prints one JSON line; the table at the end puts the code bases side by side with ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

CORPORA = {"scifact": "en", "covid_faq_en": "en", "piaf_fr": "fr", "spf_qr_fr": "fr"}
PER_DOCUMENT = 10
WORDS = 60


def _jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_corpora(data: Path) -> tuple[dict[str, list[list[str]]], list[str]]:
    """``({language: [word lists of each corpus text]}, queries of every corpus)``."""
    texts: dict[str, list[list[str]]] = {"en": [], "fr": []}
    queries: list[str] = []
    for name, language in CORPORA.items():
        folder = data / name
        if not folder.is_dir():
            continue
        for row in _jsonl(folder / "corpus.jsonl"):
            words = str(row.get("text", "")).split()
            if len(words) >= 20:
                texts[language].append(words)
        queries += [str(q["text"]) for q in _jsonl(folder / "queries.jsonl")]
    if not texts["en"] or not texts["fr"]:
        raise SystemExit(f"{data}: needs EN and FR corpora among {sorted(CORPORA)}")
    return texts, queries


def passage_text(rng: random.Random, words: list[str]) -> str:
    start = rng.randrange(max(1, len(words) - WORDS))
    return " ".join(words[start : start + WORDS])


def build(path: Path, size: int, data: Path, seed: int = 23) -> None:
    """Write ``size`` passages into a new index at ``path`` (module docstring)."""
    from kbsearch.knowledge_base import open_kb
    from kbsearch.records import Document, Passage

    texts, _ = read_corpora(data)
    rng = random.Random(seed)
    tmp = path.with_suffix(".building")
    tmp.unlink(missing_ok=True)
    seed_dir = Path(tempfile.mkdtemp())
    (seed_dir / "seed.md").write_text("# Seed\n\n## Start\n\nThe first document.\n")
    start = time.perf_counter()
    with open_kb(tmp, create=True, embedder="none") as kb:
        kb.index([seed_dir], default_access="public")  # records the settings as the CLI does
        analyzer, store = kb.analyzer, kb.store
        written = 1
        doc = 0
        while written < size:
            language = "en" if doc % 2 == 0 else "fr"
            pool = texts[language]
            doc_id = f"doc-{doc:07d}"
            title = " ".join(rng.choice(pool)[:4]).strip(".,;:")
            ranged = doc % 10 == 3
            document = Document(
                doc_id=doc_id,
                version="1",
                title=title,
                language=language,
                access="staff" if doc % 5 == 4 else "public",
                effective_from=_day("2024-01-01") if ranged else None,
                effective_to=_day("2030-12-31") if ranged else None,
                content_hash=f"synthetic-{doc}",
            )
            passages, bodies = [], []
            for i in range(min(PER_DOCUMENT, size - written)):
                heading = " ".join(rng.choice(pool)[:3]).strip(".,;:")
                text = f"{title}\n{heading}\n{passage_text(rng, rng.choice(pool))}"
                pid = f"{doc_id}@v1#s{i}"
                passages.append(Passage(pid, doc_id, "1", heading, "text", text, i))
                bodies.append(analyzer.body(text, language))
            store.documents.write(document, passages, bodies, None)
            written += len(passages)
            doc += 1
            if doc % 2000 == 0:
                print(f"  {written} passages, {time.perf_counter() - start:.0f} s", flush=True)
    shutil.rmtree(seed_dir)
    tmp.rename(path)
    print(f"built {path} ({size} passages) in {time.perf_counter() - start:.0f} s", flush=True)


def replicate(small: Path, path: Path, times: int) -> None:
    """Write ``times`` copies of the collection at ``small`` into a new index at ``path``
    (copy ``k`` suffixes its doc ids, passage ids and content hashes with ``-rK``), inside
    SQLite: FTS5 tokenizes the stored bodies again, no Python per passage, so 1M passages take
    minutes rather than hours. The same texts ``times`` over: document frequencies scale by
    ``times``, the vocabulary stays the small one's."""
    import sqlite3

    from kbsearch.store import Store
    from kbsearch.store.counts import SqlCounts

    start = time.perf_counter()
    tmp = path.with_suffix(".building")
    shutil.copy(small, tmp)
    con = sqlite3.connect(tmp, isolation_level=None)
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    (docs,) = con.execute("SELECT max(id) + 1 FROM documents").fetchone()
    (rows,) = con.execute("SELECT max(id) + 1 FROM passages").fetchone()
    fields = "version, title, language, access, effective_from, effective_to, owner, doc_type"
    passage_fields = "version, section, kind, text, ordinal, page, char_start, char_end"
    filters = "token_count, access, language, effective_from, effective_to"
    con.execute("BEGIN")
    for k in range(1, times):
        con.execute(
            f"INSERT INTO documents(id, doc_id, {fields}, format, source, content_hash)"
            f" SELECT id + {k * docs}, doc_id || '-r{k}', {fields}, format, source,"
            f" content_hash || '-r{k}' FROM documents WHERE id < {docs}"
        )
        con.execute(
            f"INSERT INTO passages(id, passage_id, document, doc_id, {passage_fields}, {filters})"
            f" SELECT id + {k * rows}, passage_id || '-r{k}', document + {k * docs},"
            f" doc_id || '-r{k}', {passage_fields}, {filters} FROM passages WHERE id < {rows}"
        )
        for table in ("passages_fts", "public_fts"):
            con.execute(
                f"INSERT INTO {table}(rowid, body) SELECT rowid + {k * rows}, body"
                f" FROM {table} WHERE rowid < {rows}"
            )
        print(f"  copy {k + 1} of {times}, {time.perf_counter() - start:.0f} s", flush=True)
    con.execute("UPDATE meta SET value = ? WHERE key = 'next_row'", (str(times * rows),))
    SqlCounts(con).fill()
    con.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
    con.execute("COMMIT")
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    Store(tmp).close()  # the file opens as an index
    tmp.rename(path)
    print(f"built {path} ({times} copies of {small}) in {time.perf_counter() - start:.0f} s")


def _day(text: str):  # noqa: ANN202 - a datetime.date
    from datetime import date

    return date.fromisoformat(text)


# -- the measurements (each in its own process: ``--measure``) -------------------------------


def _rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu(fn):  # noqa: ANN001, ANN202
    start = time.process_time()
    out = fn()
    return (time.process_time() - start) * 1000, out


def measure_search(db: Path, queries: list[str]) -> dict[str, float]:
    from kbsearch.filters import Filters
    from kbsearch.knowledge_base import open_kb

    kb = open_kb(db, embedder="none")
    public = Filters(audience="public")
    cold, _ = _cpu(lambda: kb.search(queries[0], route="lexical", filters=public))
    for q in queries:  # every query once: its postings read, its caches warm
        kb.search(q, route="lexical", filters=public)
    times = []
    for q in queries:
        ms, _ = _cpu(lambda q=q: kb.search(q, route="lexical", filters=public))
        times.append(ms)
    times.sort()
    return {
        "cold_first_search_ms": cold,
        "warm_p50_ms": times[len(times) // 2],
        "warm_p95_ms": times[int(len(times) * 0.95)],
        "search_peak_rss_mb": _rss_mb(),
    }


def measure_write(db: Path, queries: list[str]) -> dict[str, float]:
    from kbsearch.filters import Filters
    from kbsearch.knowledge_base import open_kb

    kb = open_kb(db, embedder="none")
    public = Filters(audience="public")
    for q in queries:  # the index as a server holds it: these queries' doclists read
        kb.search(q, route="lexical", filters=public)
    folder = Path(tempfile.mkdtemp())
    out = {}
    # the first write of a process also imports the parsers and loads language profiles
    for name, key, word in (
        ("first-policy", "first_write_ms", "wombat"),
        ("new-policy", "write_ms", "quokka"),
    ):
        sections = "\n\n".join(
            f"## Section {i}\n\nVaccine appointments and the {word} leave policy, part {i}."
            for i in range(PER_DOCUMENT)
        )
        (folder / f"{name}.md").write_text(f"# A new policy\n\n{sections}\n")
        out[key], report = _cpu(lambda n=name: kb.index([folder / f"{n}.md"]))
        if report.failed:
            raise SystemExit(f"the write failed: {report.failed}")
        after, hits = _cpu(
            lambda w=word: kb.search(f"{w} appointments", route="lexical", filters=public)
        )
        if not any(h.passage_id.startswith(name) for h in hits):
            raise SystemExit("the written document is not found after the write")
    shutil.rmtree(folder)
    # the queries searched before the writes, each the first of its terms since the writes
    times = sorted(
        _cpu(lambda q=q: kb.search(q, route="lexical", filters=public))[0] for q in queries
    )
    return out | {
        "first_search_after_write_ms": after,
        "after_write_p50_ms": times[len(times) // 2],
        "after_write_p95_ms": times[int(len(times) * 0.95)],
    }


def measure_serve(db: Path, queries: list[str]) -> dict[str, float]:
    from kbsearch.filters import Filters
    from kbsearch.service.engine import Engine

    def start() -> Engine:
        engine = Engine(db, embedder="none")
        snapshots = engine.snapshots
        if snapshots is not None and not snapshots.wait_for(
            engine.kb.store.database.generation(), 600
        ):
            raise SystemExit("the served snapshot was not built in 600 s")
        engine.read(
            lambda kb: kb.search(queries[0], route="lexical", filters=Filters(audience="public"))
        )
        return engine

    ms, engine = _cpu(start)
    out = {"serve_startup_ms": ms, "serve_rss_mb": _rss_mb()}
    engine.close()
    return out


# (audience, language, k) of each list that ``--measure lists`` writes per query
LISTS = (("public", None, 10), ("public", None, 100), ("staff", None, 50), ("public", "fr", 20))


def measure_lists(db: Path, queries: list[str]) -> dict[str, list]:
    """Every query's lexical hits ``[passage_id, score]`` under each of :data:`LISTS`, before
    and after a one-document write (the lists a code change must leave unchanged)."""
    from kbsearch.filters import Filters
    from kbsearch.knowledge_base import open_kb

    kb = open_kb(db, embedder="none")

    def lists() -> list:
        out = []
        for q in queries:
            for audience, language, k in LISTS:
                filters = Filters(audience=audience, language=language)
                hits = kb.search(q, route="lexical", filters=filters, k=k)
                out.append([[h.passage_id, h.score] for h in hits])
        return out

    before = lists()
    folder = Path(tempfile.mkdtemp())
    sections = "\n\n".join(
        f"## Section {i}\n\nVaccine appointments and the quokka leave policy, part {i}."
        for i in range(PER_DOCUMENT)
    )
    (folder / "new-policy.md").write_text(f"# A new policy\n\n{sections}\n")
    kb.index([folder / "new-policy.md"])
    shutil.rmtree(folder)
    return {"before": before, "after": lists()}


def compare_lists(a: dict[str, list], b: dict[str, list]) -> str:
    """One line: how many lists are equal (ids and order; scores to 1e-9 and bit for bit)."""
    lists = same = exact = 0
    for phase in ("before", "after"):
        for x, y in zip(a[phase], b[phase], strict=True):
            lists += 1
            ids = [h[0] for h in x] == [h[0] for h in y]
            close = ids and all(abs(h[1] - g[1]) <= 1e-9 for h, g in zip(x, y, strict=True))
            same += close
            exact += close and all(h[1] == g[1] for h, g in zip(x, y, strict=True))
    return f"{same}/{lists} lists equal (ids, order, scores to 1e-9), {exact} bit for bit"


MEASURES = {"search": measure_search, "write": measure_write, "serve": measure_serve}
EXTRA = {"lists": measure_lists}  # run by --check-lists


def run_measure(src: str | None, name: str, collection: Path, queries: int, data: Path) -> dict:
    """One measurement in a fresh process reading a copy of ``collection``."""
    with tempfile.TemporaryDirectory(dir=collection.parent) as tmp:
        copy = Path(tmp) / "kb.db"
        shutil.copy(collection, copy)
        env = dict(os.environ)
        if src:
            env["PYTHONPATH"] = src
        command = [sys.executable, __file__, "--measure", name, "--db", str(copy)]
        command += ["--data", str(data), "--queries", str(queries)]
        out = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise SystemExit(f"{name} with {src}: {out.stderr[-2000:]}")
        return json.loads(out.stdout.strip().splitlines()[-1])


ROWS = [
    ("first write of the process (imports, language profiles), CPU ms", "first_write_ms"),
    ("one-document write (the next), CPU ms", "write_ms"),
    ("first search after that write, CPU ms", "first_search_after_write_ms"),
    ("searches after the writes (queries searched before), CPU p50 ms", "after_write_p50_ms"),
    ("searches after the writes (queries searched before), CPU p95 ms", "after_write_p95_ms"),
    ("cold first search, CPU ms", "cold_first_search_ms"),
    ("serve start-up (snapshot served + 1 search), CPU ms", "serve_startup_ms"),
    ("search process peak RSS, MB", "search_peak_rss_mb"),
    ("served process peak RSS, MB", "serve_rss_mb"),
    ("warm lexical search, CPU p50 ms", "warm_p50_ms"),
    ("warm lexical search, CPU p95 ms", "warm_p95_ms"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder of the BEIR corpora")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "kbscale")
    parser.add_argument("--src", nargs="*", default=[], help="kbsearch src folders to compare")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--replicate",
        type=int,
        default=0,
        help="build a size as this many copies of the size divided by it (replicate())",
    )
    parser.add_argument(
        "--check-lists",
        action="store_true",
        help="with two --src: also compare their result lists (measure_lists)",
    )
    parser.add_argument(
        "--only", nargs="*", choices=sorted(MEASURES), help="measure only these (default: all)"
    )
    parser.add_argument("--measure", choices=sorted(MEASURES | EXTRA), help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    _, all_queries = read_corpora(args.data)
    queries = random.Random(7).sample(all_queries, min(args.queries, len(all_queries)))
    if args.measure:
        print(json.dumps((MEASURES | EXTRA)[args.measure](args.db, queries)))
        return
    args.work.mkdir(parents=True, exist_ok=True)
    sources = args.src or [None]
    for size in args.sizes:
        collection = args.work / f"scale-{size}.db"
        if not collection.exists() and args.replicate > 1:
            small = args.work / f"scale-{size // args.replicate}.db"
            if not small.exists():
                build(small, size // args.replicate, args.data)
            replicate(small, collection, args.replicate)
        elif not collection.exists():
            build(collection, size, args.data)
        figures = {}
        for src in sources:
            figures[src] = {}
            for name in args.only or MEASURES:
                figures[src] |= run_measure(src, name, collection, args.queries, args.data)
            print(json.dumps({"size": size, "src": src} | figures[src]), flush=True)
        if args.check_lists and len(sources) == 2:
            got = [run_measure(s, "lists", collection, args.queries, args.data) for s in sources]
            print(
                f"{size} passages, {args.queries} queries x {len(LISTS)} lists x before/after"
                f" a write: {compare_lists(*got)}",
                flush=True,
            )
        header = " | ".join(str(s or "here") for s in sources)
        ratio = " | ratio" if len(sources) == 2 else ""
        print(f"\n{size} passages | {header}{ratio}")
        for label, key in ROWS:
            if any(key not in figures[s] for s in sources):
                continue
            values = [figures[s][key] for s in sources]
            cells = " | ".join(f"{v:,.1f}" for v in values)
            extra = f" | {values[1] / values[0]:.3g}" if len(values) == 2 and values[0] else ""
            print(f"{label} | {cells}{extra}")
        print(flush=True)


if __name__ == "__main__":
    main()
