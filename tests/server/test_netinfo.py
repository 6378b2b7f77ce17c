"""The network's own round trip (flyswat.server.netinfo): TCP_INFO on real loopback sockets,
a trusted front's header, and uvicorn's WebSocket protocol handing the reader to the app."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.asyncio.client import connect

from flyswat.server.limits import Limits
from flyswat.server.netinfo import (
    RTT_HEADER,
    SCOPE_KEY,
    header_rtt_ms,
    rtt_reader,
    tcp_rtt_ms,
)
from flyswat.server.transport import uvicorn_config

from .conftest import in_thread


@contextlib.contextmanager
def loopback_pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
        with client, server:
            client.sendall(b"ping")
            server.recv(4)
            server.sendall(b"pong")
            client.recv(4)
            yield client, server


def test_the_kernel_measures_a_loopback_connection_in_well_under_a_millisecond() -> None:
    with loopback_pair() as (client, server):
        for sock in (client, server):
            rtt = tcp_rtt_ms(sock)
            assert rtt is not None and 0 < rtt < 50


def test_a_socket_that_is_not_tcp_has_no_kernel_round_trip() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        assert tcp_rtt_ms(udp) is None


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([(b"x-flyswat-rtt-us", b"60000")], 60.0),
        ([(b"X-Flyswat-Rtt-Us", b"1500")], 1.5),
        ([], None),
        ([(b"x-flyswat-rtt-us", b"60000"), (b"x-flyswat-rtt-us", b"1")], None),  # ambiguous
        ([(b"x-flyswat-rtt-us", b"-5")], None),
        ([(b"x-flyswat-rtt-us", b"6e4")], None),
        ([(b"x-flyswat-rtt-us", b"99999999999")], None),  # no network takes hours
    ],
)
def test_a_fronts_header_is_a_whole_number_of_microseconds(
    headers: list[tuple[bytes, bytes]], expected: float | None
) -> None:
    assert header_rtt_ms(headers) == expected


def scope(peer: str, header: bytes | None, kernel_ms: float | None) -> dict[str, Any]:
    headers = [(RTT_HEADER.encode(), header)] if header is not None else []
    ext = {SCOPE_KEY: {"tcp_rtt_ms": lambda: kernel_ms}} if kernel_ms is not None else {}
    return {"client": (peer, 40000), "headers": headers, "extensions": ext}


def test_the_header_is_believed_from_a_trusted_front_only() -> None:
    fronts = {"127.0.0.1"}
    front = rtt_reader(scope("127.0.0.1", b"60000", 0.02), fronts)
    assert front is not None and front() == 60.0
    direct = rtt_reader(scope("203.0.113.9", b"250000", 31.0), fronts)
    assert direct is not None and direct() == 31.0  # a client's own header is ignored
    off = rtt_reader(scope("127.0.0.1", b"250000", 0.02))  # no front configured: off
    assert off is not None and off() == 0.02


def test_a_trusted_front_that_sends_no_header_leaves_the_kernels_figure() -> None:
    reader = rtt_reader(scope("127.0.0.1", None, 0.02), {"127.0.0.1"})
    assert reader is not None and reader() == 0.02


def test_without_a_socket_there_is_nothing_to_read() -> None:
    assert rtt_reader(scope("127.0.0.1", None, None)) is None


async def echo_rtt(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A WebSocket app that answers with the round trip it can read of its own socket."""
    if scope["type"] != "websocket":
        return
    await receive()
    await send({"type": "websocket.accept"})
    reader = rtt_reader(scope)
    await send({"type": "websocket.send", "text": repr(reader() if reader else None)})
    await send({"type": "websocket.close"})


def test_the_websocket_protocol_hands_the_app_its_sockets_kernel_round_trip() -> None:
    async def ask(port: int) -> str:
        async with connect(f"ws://127.0.0.1:{port}/") as ws:
            return str(await ws.recv())

    with in_thread(echo_rtt, uvicorn_config(Limits())) as port:  # the server's own protocols
        answer = asyncio.run(ask(port))
    assert answer != "None"
    assert 0 < float(answer) < 50


async def echo_front_rtt(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """:func:`echo_rtt`, with 127.0.0.1 a trusted front."""
    if scope["type"] != "websocket":
        return
    await receive()
    await send({"type": "websocket.accept"})
    reader = rtt_reader(scope, {"127.0.0.1"})
    await send({"type": "websocket.send", "text": repr(reader() if reader else None)})
    await send({"type": "websocket.close"})


def test_a_front_that_is_also_a_trusted_proxy_is_believed_for_the_peer_it_is() -> None:
    """DEPLOY.md's proxy is named twice (``--trusted-proxies`` and ``--rtt-header-from``):
    its ``X-Forwarded-For`` makes the scope's client the player's address, and its round-trip
    header must still be believed, as coming from the peer of the connection."""

    async def ask(port: int) -> str:
        sent = {"X-Forwarded-For": "203.0.113.9", RTT_HEADER: "60000"}
        async with connect(f"ws://127.0.0.1:{port}/", additional_headers=sent) as ws:
            return str(await ws.recv())

    config = uvicorn_config(Limits(), proxies=("127.0.0.1",))
    with in_thread(echo_front_rtt, config) as port:
        assert asyncio.run(ask(port)) == "60.0"
