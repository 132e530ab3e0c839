"""HTTP load on loopback: N concurrent clients search a served index for a fixed time while
one writer replaces a document every second; prints requests/s, latency percentiles, errors,
and the resident memory of the server process (with ``--processes N``: of each of its N
serving processes, and their CPU together).

    python benchmarks/http_load.py --db ~/.local/share/kbsearch/demo/helpcentre.db \\
        --clients 8 --seconds 30 --route hybrid

The index is copied first (the writer changes it). The server is ``kbsearch serve`` in its own
process on 127.0.0.1 (so its memory is its own), with a keys file made for the run: the
clients search with a public read key, the writer uses a staff write key. Queries are the
demo question set's, in order, each client starting at its own place; with ``--unique``
every query gets a counter word appended, so no query vector is ever served from the cache;
with ``--warm-pass`` every query is searched once before the measure (what a warm server has
seen). The server's resident memory is sampled every 0.2 s (``server_rss_*_by_tenth``: at the
end of each tenth of the run; anon: its own heap, file: mapped files such as the model). Only
loopback; bounded by ``--seconds``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE.parent / "src" / "kbsearch" / "examples" / "helpcentre" / "questions.jsonl"
READ_KEY = "bench-public-read-key-0001"
WRITE_KEY = "bench-staff-write-key-0001"
DOC = "# Delivery notice\n\n## Service update\n\nParcel deliveries run as usual, update {n}.\n"


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """Resident memory of a process in MiB (``VmRSS``; ``RssAnon``: its private heap;
    ``RssFile``: file pages, such as the memory-mapped model weights), 0 when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (``/proc/PID/stat``), in seconds."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def descendants(pid: int) -> list[int]:
    """Every process started under ``pid`` (children, theirs...), from ``/proc``."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
        for child in children:
            found += [child, *descendants(child)]
    return found


def worker_pids(pid: int, processes: int) -> list[int]:
    """The processes that serve: the server itself, or with ``--processes N`` its N worker
    processes (``spawn_main`` in their command line; not the supervisor nor
    multiprocessing's resource tracker)."""
    if processes == 1:
        return [pid]
    return [
        child for child in descendants(pid)
        if "spawn_main" in Path(f"/proc/{child}/cmdline").read_text(errors="replace")
    ]  # fmt: skip


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


class LeanClient:
    """A minimal HTTP/1.1 keep-alive GET client on one asyncio connection, for the searching
    clients: they share the two cores with the server, and httpx costs about 1.5 ms of CPU a
    request where this costs a fraction of it (``--client httpx`` measures with httpx).
    Responses need a Content-Length (uvicorn sends one for every JSON answer)."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        parts = urllib.parse.urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str, params: dict[str, object]) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        target = f"{path}?{urllib.parse.urlencode(params)}"
        self.writer.write(f"GET {target} HTTP/1.1\r\nHost: {self.host}\r\n{self.head}\r\n".encode())
        head = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        status = int(head.split(" ", 2)[1])
        length = next(
            (int(line.split(":", 1)[1]) for line in head.split("\r\n")
             if line.lower().startswith("content-length:")),
            None,
        )  # fmt: skip
        if length is None:
            raise ValueError("a response without Content-Length")
        return status, await self.reader.readexactly(length)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def client(
    url: str, queries: list[str], start: int, args: argparse.Namespace, deadline: float,
    latencies: list[float], errors: list[str], counter: list[int],
) -> None:  # fmt: skip
    headers = {"Authorization": f"Bearer {READ_KEY}"}
    if args.client == "httpx":
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as c:
            await searches(c, queries, start, args, deadline, latencies, errors, counter)
        return
    lean = LeanClient(url, headers)
    try:
        await searches(lean, queries, start, args, deadline, latencies, errors, counter)
    finally:
        await lean.close()


async def searches(
    c: httpx.AsyncClient | LeanClient, queries: list[str], start: int,
    args: argparse.Namespace, deadline: float, latencies: list[float], errors: list[str],
    counter: list[int],
) -> None:  # fmt: skip
    i = start
    while time.perf_counter() < deadline:
        q = queries[i % len(queries)]
        if args.unique:
            counter[0] += 1
            q = f"{q} n{counter[0]}"
        i += 1
        params = {"q": q, "k": args.k, "route": args.route}
        t0 = time.perf_counter()
        try:
            if isinstance(c, LeanClient):
                status, body = await asyncio.wait_for(c.get("/search", params), 30)
            else:
                r = await c.get("/search", params=params)
                status, body = r.status_code, r.content
            ok = status == 200 and "hits" in json.loads(body)
            if not ok:
                errors.append(f"{status} {body[:120]!r}")
        except (httpx.HTTPError, OSError, ValueError, asyncio.IncompleteReadError) as exc:
            errors.append(type(exc).__name__)
            if isinstance(c, LeanClient):  # start again on a new connection
                await c.close()
                c.reader = c.writer = None
            continue
        latencies.append(time.perf_counter() - t0)


async def warm_pass(url: str, queries: list[str], args: argparse.Namespace) -> None:
    """Search every query of ``queries`` once, ``args.clients`` at a time, with the run's
    route and k (with ``--unique`` too: the text before its counter word is what repeats)."""
    lean = [LeanClient(url, {"Authorization": f"Bearer {READ_KEY}"}) for _ in range(args.clients)]

    async def one(c: LeanClient, mine: list[str]) -> None:
        for q in mine:
            await c.get("/search", {"q": q, "k": args.k, "route": args.route})

    try:
        await asyncio.gather(*(one(c, queries[i :: len(lean)]) for i, c in enumerate(lean)))
    finally:
        for c in lean:
            await c.close()


async def writer(
    url: str, deadline: float, interval: float, times: list[float], errors: list[str]
) -> None:
    headers = {"Authorization": f"Bearer {WRITE_KEY}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as c:
        n = 0
        while time.perf_counter() < deadline:
            n += 1
            t0 = time.perf_counter()
            r = await c.put(
                "/documents/delivery-notice",
                files={"file": ("notice.md", DOC.format(n=n).encode())},
                data={"access": "public", "language": "en"},
            )
            times.append(time.perf_counter() - t0)
            if r.status_code not in (200, 201):
                errors.append(f"write {r.status_code} {r.text[:120]}")
            await asyncio.sleep(max(0.0, interval - (time.perf_counter() - t0)))


async def sample_memory(
    pids: list[int], deadline: float, samples: list[tuple[float, float, float]],
    peaks: dict[int, float],
) -> None:  # fmt: skip
    """``samples``: the first serving process's memory every 0.2 s; ``peaks``: each one's
    highest VmRSS."""
    while time.perf_counter() < deadline:
        samples.append(tuple(rss_mb(pids[0], f) for f in ("VmRSS", "RssAnon", "RssFile")))
        for pid in pids:
            peaks[pid] = max(peaks.get(pid, 0.0), rss_mb(pid))
        await asyncio.sleep(0.2)


def series(
    samples: list[tuple[float, float, float]], field: int = 0, parts: int = 10
) -> list[float]:
    """The server's memory at the end of each tenth of the run (MB; ``field`` 0: VmRSS, 1:
    RssAnon, its own heap; 2: RssFile, file pages such as the model's weights)."""
    if not samples:
        return []
    ends = [max(0, round(len(samples) * (i + 1) / parts) - 1) for i in range(parts)]
    return [round(samples[i][field], 1) for i in ends]


async def load(url: str, server: int, args: argparse.Namespace) -> dict[str, object]:
    """The run's figures; ``server``: the ``kbsearch serve`` process (its CPU counted with
    every process under it; its memory is its serving processes')."""
    pids = worker_pids(server, args.processes)
    everyone = [server, *descendants(server)]
    queries = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines()]
    latencies: list[float] = []
    errors: list[str] = []
    writes: list[float] = []
    memory: list[tuple[float, float, float]] = []
    peaks: dict[int, float] = {}
    counter = [0]
    if args.warm_pass:  # every query once (its postings, sentences, vector), not counted
        await warm_pass(url, queries, args)
    # warm-up: a few queries (model threads, caches), not counted; --warm-clients N on N
    # connections (with --processes, so that every process has answered some)
    warm_deadline = time.perf_counter() + args.warmup
    step = max(1, len(queries) // args.warm_clients)
    await asyncio.gather(*(
        client(url, queries, i * step, args, warm_deadline, [], [], counter)
        for i in range(args.warm_clients)
    ))  # fmt: skip
    deadline = time.perf_counter() + args.seconds
    started = time.perf_counter()
    cpu_start = sum(cpu_seconds(p) for p in everyone)
    each_start = [cpu_seconds(p) for p in pids]
    client_start = cpu_seconds(os.getpid())
    load_start = os.getloadavg()[0]
    step = max(1, len(queries) // args.clients)
    tasks = [
        client(url, queries, i * step, args, deadline, latencies, errors, counter)
        for i in range(args.clients)
    ]
    if args.write_interval > 0:
        tasks.append(writer(url, deadline, args.write_interval, writes, errors))
    tasks.append(sample_memory(pids, deadline, memory, peaks))
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - started
    cpu = sum(cpu_seconds(p) for p in everyone) - cpu_start
    each = [round(cpu_seconds(p) - c, 1) for p, c in zip(pids, each_start, strict=True)]
    client_cpu = cpu_seconds(os.getpid()) - client_start
    served = max(1, len(latencies))
    return {
        "load_average": f"{load_start:.1f} -> {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)",
        "clients": f"{args.clients} ({args.client})",
        "route": args.route,
        "seconds": round(elapsed, 1),
        "requests": len(latencies),
        "requests_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(1000 * percentile(latencies, 50), 1),
        "p95_ms": round(1000 * percentile(latencies, 95), 1),
        "p99_ms": round(1000 * percentile(latencies, 99), 1),
        "max_ms": round(1000 * max(latencies, default=float("nan")), 1),
        "errors": len(errors),
        "first_errors": errors[:3],
        "writes": len(writes),
        "write_p50_ms": round(1000 * statistics.median(writes), 1) if writes else None,
        "write_max_ms": round(1000 * max(writes), 1) if writes else None,
        # the first PUT apart: it reads what the later ones keep (the store's row log, the
        # inventory), so the max alone does not say whether the steady writes stay bounded
        "write_first_ms": round(1000 * writes[0], 1) if writes else None,
        "write_max_after_first_ms": round(1000 * max(writes[1:]), 1) if writes[1:] else None,
        "writes_over_1s": sum(1 for w in writes if w > 1.0),
        # the server's CPU per search (writes included): what the load costs, whatever else
        # the machine runs; 2 / this = the searches/s two idle cores could serve
        "server_cpu_ms_per_request": round(1000 * cpu / served, 1),
        # each serving process's CPU seconds in the run: how the connections were shared
        "server_processes_cpu_s": each,
        # the load client's own CPU per search (it shares the cores with the server)
        "client_cpu_ms_per_request": round(1000 * client_cpu / served, 1),
        "server_rss_mb_peak": round(max(memory, default=(0.0,))[0], 1),
        "server_rss_mb_peak_anon_file": [round(x, 1) for x in max(memory, default=(0, 0, 0))[1:]],
        "server_rss_mb_end": round(rss_mb(pids[0]), 1),
        # --processes N: each serving process's highest resident memory (the supervisor's
        # own, a few tens of MB, apart)
        "server_processes_rss_mb_peak": [round(peaks.get(p, 0.0), 1) for p in pids],
        "supervisor_rss_mb": round(rss_mb(server), 1) if args.processes > 1 else None,
        "server_rss_mb_by_tenth": series(memory),
        "server_rss_anon_mb_by_tenth": series(memory, 1),
        "server_rss_file_mb_by_tenth": series(memory, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, type=Path, help="Index to serve (copied).")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument(
        "--warm-clients", type=int, default=1, help="Clients of the warm-up (default 1)."
    )
    parser.add_argument("--route", default="hybrid", choices=["lexical", "dense", "hybrid"])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--write-interval", type=float, default=1.0, help="0: no writer.")
    parser.add_argument("--workers", type=int, default=4, help="Server search threads.")
    parser.add_argument(
        "--processes", type=int, default=1,
        help="Server processes (kbsearch serve --processes; 1 passes no option, so a tree "
        "without it is measured too).",
    )  # fmt: skip
    parser.add_argument("--port", type=int, default=8731)
    parser.add_argument("--unique", action="store_true", help="Never repeat a query text.")
    parser.add_argument(
        "--warm-pass", action="store_true",
        help="Search every query once before measuring (not counted; then --warmup).",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    parser.add_argument(
        "--client", default="lean", choices=["lean", "httpx"],
        help="The searching clients' HTTP library (lean: a minimal keep-alive client).",
    )  # fmt: skip
    args = parser.parse_args()
    if args.seconds > 600:
        parser.error("--seconds is bounded at 600")

    work = Path(tempfile.mkdtemp(prefix="kbsearch-load-"))
    db = work / "served.db"
    shutil.copyfile(args.db, db)
    keys = work / "keys.txt"
    keys.write_text(f"{READ_KEY} public read\n{WRITE_KEY} staff write\n")
    url = f"http://127.0.0.1:{args.port}"
    env = os.environ | {"OPENBLAS_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "kbsearch", "serve", "--db", str(db), "--keys", str(keys),
               "--host", "127.0.0.1", "--port", str(args.port),
               "--workers", str(args.workers)]  # fmt: skip
    if args.processes > 1:
        command += ["--processes", str(args.processes)]
    log = work / "server.log"
    with log.open("w") as stderr:
        server = subprocess.Popen(command, env=env, stderr=stderr)
    try:
        started = time.perf_counter()
        while True:  # with --processes N: until the log says all N serve
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200 and (
                    args.processes == 1 or " processes: " in log.read_text()
                ):
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.perf_counter() - started > 180:
                raise SystemExit("the server did not start: " + log.read_text()[-2000:])
            time.sleep(0.3)
        boot = time.perf_counter() - started
        pids = worker_pids(server.pid, args.processes)
        idle = rss_mb(pids[0])
        idle_split = [round(rss_mb(pids[0], f), 1) for f in ("RssAnon", "RssFile")]
        idle_each = [round(rss_mb(p), 1) for p in pids]
        figures = asyncio.run(load(url, server.pid, args))
        figures = {
            "processes": args.processes,
            "startup_s": round(boot, 1),
            "server_rss_mb_idle": round(idle, 1),
            "server_rss_mb_idle_anon_file": idle_split,
            "server_processes_rss_mb_idle": idle_each,
        } | figures
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    for key, value in figures.items():
        print(f"{key:>20}: {value}")


if __name__ == "__main__":
    main()
