"""One log line per request: method, path (never the query string, so no query text and no
key), status, duration and the caller's audience; plain text or JSON (``--log-format json``).
"""

from __future__ import annotations

import json
import logging
import sys
import time

LOGGER = logging.getLogger("kbsearch.service")


class _Json(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "message": record.getMessage(),
        }
        payload.update(getattr(record, "fields", {}))
        return json.dumps(payload, ensure_ascii=False)


class _Text(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.created))
        return f"{stamp} {record.levelname.lower()} {record.getMessage()}"


def configure(log_format: str = "text") -> None:
    """Send the service's log lines to stderr, as text or one JSON object per line."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Json() if log_format == "json" else _Text())
    LOGGER.handlers[:] = [handler]
    LOGGER.setLevel(logging.INFO)
    LOGGER.propagate = False


def request_line(method: str, path: str, status: int, seconds: float, audience: str) -> None:
    fields = {
        "method": method,
        "path": path,
        "status": status,
        "duration_ms": round(seconds * 1000, 2),
        "audience": audience,
    }
    LOGGER.info(
        "%s %s %d %.1f ms %s",
        method,
        path,
        status,
        seconds * 1000,
        audience,
        extra={"fields": fields},
    )


def note(message: str) -> None:
    LOGGER.info(message, extra={"fields": {"event": "note"}})


def warn(message: str) -> None:
    """A line at start about something that will not work as asked (level ``warning``)."""
    LOGGER.warning(message, extra={"fields": {"event": "note"}})
