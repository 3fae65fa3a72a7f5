"""The test servers' ports: below the kernel's ephemeral range, claimed across test processes, never given twice."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from tests import local_servers
from tests.conftest import ROOT


def test_ports_lie_below_the_ephemeral_range_and_differ():
    with open("/proc/sys/net/ipv4/ip_local_port_range") as ranges:
        ephemeral_low = int(ranges.read().split()[0])
    ports = [local_servers.free_port() for _ in range(5)]
    assert len(set(ports)) == 5 and all(1024 <= port < ephemeral_low for port in ports)


def test_a_port_another_test_process_was_given_is_not_given_here(monkeypatch):
    holder = subprocess.Popen(
        [sys.executable, "-c", "from tests.local_servers import free_port; print(free_port(), flush=True); input()"],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        theirs = int(holder.stdout.readline())
        monkeypatch.setattr(local_servers, "_ports_below_the_ephemeral_range", lambda: range(theirs, theirs + 1))
        with pytest.raises(RuntimeError, match="no free port"):
            local_servers.free_port()
    finally:
        local_servers.stop(holder, grace_seconds=0)  # by its pid
        holder.stdin.close()
        holder.stdout.close()


def test_a_port_something_listens_on_is_not_given(monkeypatch):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        taken = server.getsockname()[1]
        monkeypatch.setattr(local_servers, "_ports_below_the_ephemeral_range", lambda: range(taken, taken + 1))
        with pytest.raises(RuntimeError, match="no free port"):
            local_servers.free_port()
