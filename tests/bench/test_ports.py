"""The test harness's ports (``bench/harness/server.py``): two nodes asked for before either
is started must not be given one port (a cluster test once started both on one)."""

from __future__ import annotations

from harness.server import _ours, free_ports


def test_ports_asked_for_before_any_is_bound_are_never_the_same() -> None:
    given = [range(base, base + 3) for base in (free_ports(3) for _ in range(200))]
    ports = [port for block in given for port in block]
    assert len(set(ports)) == len(ports)
    assert all(_ours(block.start, 3) for block in given)
