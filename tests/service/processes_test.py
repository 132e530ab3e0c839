"""The sockets of ``kbsearch serve --processes N``: one per process on one port, the kernel
spreading the connections over them (the end-to-end run: tests/cli/serve_processes_test.py)."""

from __future__ import annotations

import errno
import socket

import pytest

from kbsearch.service.processes import port_sockets, stop_reason


@pytest.mark.skipif(not hasattr(socket, "SO_REUSEPORT"), reason="no SO_REUSEPORT")
def test_each_process_socket_gets_a_share_of_the_connections() -> None:
    """With one socket shared by every process, the first to wake accepted every waiting
    connection; with one socket each, the kernel hands each connection to one of them by a
    hash of its addresses (16 connections all on one of 2 sockets: a chance of 2 in 65,536)."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    address = probe.getsockname()
    sockets = port_sockets(probe, 2)
    clients: list[socket.socket] = []
    try:
        assert probe.fileno() == -1 and [s.getsockname() for s in sockets] == [address] * 2
        for shared in sockets:
            shared.listen(64)
            shared.setblocking(False)
        with socket.socket() as other, pytest.raises(OSError) as taken:
            other.bind(address)  # the port is theirs: another server cannot start on it
        assert taken.value.errno == errno.EADDRINUSE
        clients = [socket.create_connection(address, timeout=5) for _ in range(16)]
        counts = [_accept_all(shared) for shared in sockets]
        assert sum(counts) == 16 and min(counts) > 0, counts
    finally:
        for s in [*clients, *sockets]:
            s.close()


def _accept_all(listening: socket.socket) -> int:
    accepted = 0
    while True:
        try:
            connection, _ = listening.accept()
        except BlockingIOError:
            return accepted
        connection.close()
        accepted += 1


def test_one_process_keeps_the_socket_it_was_given() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        assert port_sockets(probe, 1) == [probe]
        assert probe.fileno() != -1


def test_the_log_says_why_a_process_stopped() -> None:
    # it said "stopped (exit status -9)" for a process killed by a signal and for one the
    # supervisor killed because it did not answer its check
    assert stop_reason(-9, 5) == "killed by SIGKILL"
    assert stop_reason(-11, 5) == "killed by SIGSEGV"
    assert stop_reason(1, 5) == "exit status 1"
    assert (
        stop_reason(None, 5) == "it did not answer the supervisor's check in 5 s, so it was killed"
    )
