"""Serving a knowledge base: the HTTP API and search page (:func:`create_app`), the MCP server
(:mod:`kbsearch.service.mcp_server`), keys, metrics and request logs."""

from __future__ import annotations

from .app import create_app
from .keys import Caller, KeyRing

__all__ = ["Caller", "KeyRing", "create_app"]
