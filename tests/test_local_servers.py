"""The test servers' ports: each pytest-xdist worker draws from its own share, below the kernel's ephemeral range."""

from __future__ import annotations

import socket

from tests import local_servers


def _share(monkeypatch, worker: int, workers: int) -> range:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{worker}")
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", str(workers))
    return local_servers._this_workers_ports()


def test_workers_shares_are_disjoint_and_below_the_ephemeral_range(monkeypatch):
    shares = [_share(monkeypatch, worker, 4) for worker in range(4)]
    ports = [port for share in shares for port in share]
    assert len(ports) == len(set(ports)) and all(len(share) >= 1000 for share in shares)
    with open("/proc/sys/net/ipv4/ip_local_port_range") as ranges:
        ephemeral_low = int(ranges.read().split()[0])
    assert max(ports) < ephemeral_low and min(ports) >= 1024


def _hold_a_port_of(share: range) -> socket.socket:
    """A listening socket on one port of `share`, counted from its top (other test processes start from the bottom)."""
    for port in reversed(share):
        held = socket.socket()
        try:
            held.bind(("127.0.0.1", port))
        except OSError:
            held.close()
            continue
        held.listen()
        return held
    raise AssertionError(f"no port of {share} could be bound")


def test_a_port_is_handed_out_once_and_skips_one_in_use(monkeypatch):
    with _hold_a_port_of(_share(monkeypatch, 0, 1)) as held:
        port = held.getsockname()[1]
        monkeypatch.setattr(local_servers, "_this_workers_ports", lambda: range(port, port + 20))
        monkeypatch.setattr(local_servers, "_handed_out", set())
        first, second = local_servers.free_port(), local_servers.free_port()
    assert port not in (first, second) and first != second and {first, second} <= set(range(port, port + 20))
