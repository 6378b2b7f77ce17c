"""New work paced a loop turn at a time (``transport.Admissions``): when many sockets bring a
request head or a socket's first message in the same turn — every table's game ending at
once, and its players opening the next tables —, a bounded number is taken in that turn and
the rest in the next ones, in order, each answered. Real sockets, a real uvicorn server with
the server's own protocols; the loop is held on purpose so that a burst arrives in one turn.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from flyswat.server.limits import Limits
from flyswat.server.transport import (
    ADMISSIONS_PER_TURN,
    PROTOCOL_KEY,
    Admissions,
    gate_of,
    uvicorn_config,
)
from flyswat.server.frames import frame, TEXT

from .conftest import in_thread
from .test_abuse import response

BURST = 3 * ADMISSIONS_PER_TURN


@pytest.mark.anyio
async def test_past_its_count_a_turns_new_work_waits_for_the_next_turns_in_order() -> None:
    admissions = Admissions(per_turn=2)
    done: list[int] = []
    for i in range(5):  # all in this turn
        if admissions.now():
            done.append(i)
        else:
            admissions.later(lambda i=i: done.append(i))
    assert done == [0, 1]
    await asyncio.sleep(0)  # the next turn
    assert done == [0, 1, 2, 3]
    assert not admissions.now()  # this turn's count is spent by what waited
    admissions.later(lambda: done.append(5))
    await asyncio.sleep(0)
    assert done == [0, 1, 2, 3, 4, 5]
    await asyncio.sleep(0)
    assert admissions.now()  # a quiet turn: new work goes at once
    assert admissions.deferred == 4


def _hold_the_loop(request: Request) -> PlainTextResponse:
    time.sleep(float(request.query_params["s"]))  # on the loop's thread, on purpose
    return PlainTextResponse("held")


async def _hold(request: Request) -> PlainTextResponse:
    return _hold_the_loop(request)


async def _hello(request: Request) -> PlainTextResponse:
    return PlainTextResponse(request.query_params["n"])


class _Echo:
    """A taken-over socket's receiver: says back each message."""

    def __init__(self, protocol: Any) -> None:
        self.protocol = protocol
        self.ended = asyncio.get_running_loop().create_future()

    def message(self, payload: bytes, text: bool) -> None:
        self.protocol.transport.write(frame(TEXT, b"echo " + payload))

    def closed(self) -> None:
        self.ended.set_result(None)


async def _taken_over(websocket: WebSocket) -> None:
    await websocket.accept()
    protocol = websocket.scope["extensions"][PROTOCOL_KEY]
    echo = _Echo(protocol)
    protocol.take_over(echo)
    await echo.ended  # the application ends with the socket


APP = Starlette(routes=[Route("/hold", _hold), Route("/hello", _hello),
                        WebSocketRoute("/ws", _taken_over)])  # fmt: skip


def _holding(port: int, seconds: float) -> threading.Thread:
    """Ask the server to hold its loop for ``seconds``; returns once it holds it."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"GET /hold?s={seconds} HTTP/1.1\r\nhost: x\r\n\r\n".encode())
    thread = threading.Thread(target=lambda: (response(sock, within=30), sock.close()))
    thread.start()
    time.sleep(0.3)  # the loop is inside the handler now
    return thread


def test_a_burst_of_request_heads_in_one_turn_is_taken_a_few_a_turn_and_every_one_answered() -> None:
    config = uvicorn_config(Limits())
    gate = gate_of(config)
    with in_thread(APP, config) as port:
        socks = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(BURST)]
        holder = _holding(port, 1.0)
        before = gate.admissions.deferred
        for i, sock in enumerate(socks):  # all read in the one turn after the hold
            sock.sendall(f"GET /hello?n={i} HTTP/1.1\r\nhost: x\r\n\r\n".encode())
        answers = [response(sock, within=30) for sock in socks]
        holder.join(30)
        assert [(status, body) for status, _, body in answers] == [
            (200, str(i).encode()) for i in range(BURST)
        ]
        assert gate.admissions.deferred - before >= BURST - 2 * ADMISSIONS_PER_TURN
        for sock in socks:
            sock.close()


def _ws_open(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(b"GET /ws HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\n"
                 b"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                 b"sec-websocket-version: 13\r\n\r\n")  # fmt: skip
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def _masked(text: bytes) -> bytes:
    mask = b"\x01\x02\x03\x04"
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(text))
    return bytes([0x81, 0x80 | len(text)]) + mask + body


def test_the_first_messages_of_sockets_opened_together_are_paced_and_each_answered() -> None:
    config = uvicorn_config(Limits())
    gate = gate_of(config)
    with in_thread(APP, config) as port:
        socks = [_ws_open(port) for _ in range(BURST)]
        time.sleep(0.3)  # every socket taken over
        holder = _holding(port, 1.0)
        before = gate.admissions.deferred
        for i, sock in enumerate(socks):
            sock.sendall(_masked(f"hello {i}".encode()))
        for i, sock in enumerate(socks):
            want = f"echo hello {i}".encode()
            got = b""
            while len(got) < 2 + len(want):
                got += sock.recv(64)
            assert got == bytes([0x81, len(want)]) + want
        holder.join(30)
        assert gate.admissions.deferred - before >= BURST - 2 * ADMISSIONS_PER_TURN
        for sock in socks:
            sock.close()
