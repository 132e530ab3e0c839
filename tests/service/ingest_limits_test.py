"""Uploads under the ingest limits (issue 22): a hostile file PUT to the server is answered
422 with {"error"} naming the limit, and the index (and the upload store) stays as it was; a
document over its time budget (an injected clock) is refused and the write queue moves on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import httpx
import numpy as np
import pytest
from hostile_files import docx_bomb, flate_bomb_pdf, many_pages_pdf
from support import FakeEmbedder
from support_service import STAFF_WRITE, Running, auth

from kbsearch.ingest.limits import IngestLimits

LIMITS = IngestLimits(max_uncompressed_bytes=2_000_000, max_pages=10)


def _state(client: httpx.Client) -> object:
    return client.get("/documents", headers=auth(STAFF_WRITE)).json()


def _put(client: httpx.Client, doc_id: str, name: str, content: bytes) -> httpx.Response:
    return client.put(
        f"/documents/{doc_id}",
        files={"file": (name, content)},
        data={"access": "public"},
        headers=auth(STAFF_WRITE),
    )


@pytest.mark.parametrize(
    ("make", "limit"),
    [
        pytest.param(
            lambda p: docx_bomb(p / "b.docx", 3_000_000), "max_uncompressed_bytes", id="zip-bomb"
        ),  # fmt: skip
        pytest.param(
            lambda p: flate_bomb_pdf(p / "b.pdf", 3_000_000),
            "max_uncompressed_bytes",
            id="flate-bomb",
        ),  # fmt: skip
        pytest.param(lambda p: many_pages_pdf(p / "long.pdf", 30), "max_pages", id="pages"),
    ],
)
def test_a_hostile_upload_is_422_and_changes_nothing(
    serve: Callable[..., Running],
    kb_file: Path,
    keys_file: Path,
    tmp_path: Path,
    make: Callable[[Path], Path],
    limit: str,
) -> None:
    pytest.importorskip("reportlab")
    server = serve(kb_file, keys=keys_file, ingest_limits=LIMITS)
    hostile = make(tmp_path)
    uploads = kb_file.parent / f"{kb_file.name}.uploads"
    with httpx.Client(base_url=server.url, timeout=30) as client:
        before = _state(client)
        response = _put(client, "returns", hostile.name, hostile.read_bytes())
        assert response.status_code == 422
        error = response.json()["error"]
        assert f"{hostile.name}: refused:" in error and f"({limit})" in error
        assert str(tmp_path) not in error and str(kb_file.parent) not in error
        assert _state(client) == before
        assert not uploads.exists() or not any(uploads.rglob(hostile.name))


class SlowEmbedder(FakeEmbedder):
    """Each passage batch takes 10 s on ``clock``."""

    def __init__(self, clock: list[float]) -> None:
        super().__init__()
        self.clock = clock

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.clock[0] += 10
        return super().encode_passages(texts)


def test_an_upload_over_its_time_budget_is_refused_and_the_next_write_goes_through(
    serve: Callable[..., Running], kb_file: Path, keys_file: Path
) -> None:
    clock = [0.0]
    limits = IngestLimits(max_seconds=25, clock=lambda: clock[0])
    server = serve(kb_file, keys=keys_file, embedder=SlowEmbedder(clock), ingest_limits=limits)
    long = "# Long\n\n" + "".join(
        f"## Part {n}\n\nPart {n} of the long page.\n\n" for n in range(400)
    )
    with httpx.Client(base_url=server.url, timeout=30) as client:
        before = _state(client)
        response = _put(client, "long", "long.md", long.encode())
        assert response.status_code == 422
        assert "over 25 s to embed this document (max_seconds)" in response.json()["error"]
        assert _state(client) == before
        short = _put(client, "short", "short.md", b"# Short\n\n## Hours\n\nOpen at nine.\n")
        assert short.status_code == 201
