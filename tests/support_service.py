"""Helpers of the service tests (not a test module): API keys, and the app running on uvicorn
in a thread on a free loopback port."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn

from kbsearch.service.app import HTTP_PARSER

STAFF_WRITE = "staff-writer-key-0123456789"
STAFF_READ = "staff-reader-key-0123456789"
PUBLIC_READ = "public-reader-key-0123456789"
KEYS = f"""\
# key                          audience  access
{STAFF_WRITE}  staff  write
{STAFF_READ}   staff  read
{PUBLIC_READ}  public read
"""


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


class Running:
    """A uvicorn server in a thread; ``url`` is its base address."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        config = uvicorn.Config(
            app, log_level="warning", access_log=False, lifespan="on", http=HTTP_PARSER
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )

    def __enter__(self) -> Running:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)
        self.socket.close()
