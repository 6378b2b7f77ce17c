"""Abuse at the transport, over real sockets: what one client must not be able to take.

Most tests run against one ``flyswat serve`` process with small limits; each test speaks
from a loopback address of its own (127.0.0.x), so that the per-address limits of one test
cannot touch another's. The descriptor-limit test has a server of its own, started with
``RLIMIT_NOFILE`` 256. Loads are bounded (hundreds of sockets, tens of MB) and every wait has
a generous deadline; nothing here times the server.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from flyswat.server.app import build_app
from flyswat.server.limits import Limits
from flyswat.server.transport import SOCKET_KEY, TRANSPORT_KEY, gate_of, uvicorn_config
from harness.server import running_server

from .conftest import FAST, Player, in_thread

HEADER_TIMEOUT = 2.0
BODY_TIMEOUT = 2.0
PER_ADDRESS = 8
TABLE_BURST = 3
REQUEST_BURST = 40
SCRAPE_BURST = 3
#: Slack on every deadline: the server's timers are exact, a busy machine is not.
SLACK = 6.0

LIMITED = [
    "--header-timeout", str(HEADER_TIMEOUT),
    "--body-timeout", str(BODY_TIMEOUT),
    "--connections-per-address", str(PER_ADDRESS),
    "--table-burst", str(TABLE_BURST),
    "--tables-per-minute", "0.5",
    "--request-burst", str(REQUEST_BURST),
    "--requests-per-second", "2",
    "--scrape-burst", str(SCRAPE_BURST),
    "--scrapes-per-minute", "6",
    "--log-interval", "1",
]  # fmt: skip


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int, Path]]:
    """``flyswat serve`` with small limits, loopback not exempt: ``(port, pid, its log)``."""
    db = tmp_path_factory.mktemp("abuse") / "abuse.db"
    with running_server(db, args=LIMITED, limit_loopback=True) as (_, port, pid):
        yield port, pid, db.with_suffix(".log")


@pytest.fixture
def limited(served: tuple[int, int, Path]) -> tuple[int, int]:
    """The port and pid of the limited server."""
    return served[0], served[1]


# -- helpers ------------------------------------------------------------------------------


def dial(port: int, source: str) -> socket.socket:
    """A TCP connection to the server from the loopback address ``source``."""
    return socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))


def closed_by_server(sock: socket.socket, within: float, feed: bytes = b"") -> bool:
    """Whether the server closes ``sock`` within ``within`` seconds; meanwhile ``feed`` is
    sent a byte every 0.2 s (a slow-loris client) and whatever the server says is read."""
    deadline = time.monotonic() + within
    with contextlib.suppress(ConnectionError):
        for i in range(10**6):
            if time.monotonic() > deadline:
                return False
            if feed:
                sock.sendall(feed[i % len(feed) : i % len(feed) + 1])
            readable, _, _ = select.select([sock], [], [], 0.2)
            if readable and sock.recv(65536) == b"":
                return True
    return True


def response(sock: socket.socket, within: float = 10.0) -> tuple[int, dict[str, str], Any]:
    """Read one whole HTTP response from ``sock``: status, headers, body (JSON decoded)."""
    sock.settimeout(within)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError(f"closed before a response: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    body = body[:length]
    if headers.get("content-type", "").startswith("application/json"):
        return int(lines[0].split()[1]), headers, json.loads(body)
    return int(lines[0].split()[1]), headers, body


def upload(sock: socket.socket, head: bytes, body: Iterator[bytes]) -> tuple[int, Any]:
    """Send ``head`` and then ``body`` as a careful client does: it stops sending as soon as
    the server has answered. Returns the answer's status and JSON body."""
    sock.sendall(head)
    sock.setblocking(False)
    pending = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if not pending:
            pending = next(body, b"")
        readable, writable, _ = select.select([sock], [sock] if pending else [], [], 1.0)
        if readable:
            break
        if writable:
            try:
                pending = pending[sock.send(pending) :]
            except (BlockingIOError, InterruptedError):
                pass
            except ConnectionError:
                break
    sock.setblocking(True)
    status, _, reply = response(sock)
    return status, reply


def peak_rss_kb(pid: int) -> int:
    """The highest resident set size of process ``pid`` so far (``VmHWM``), in kB: a body
    read whole and freed again still shows here."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def client(source: str) -> httpx.Client:
    """An HTTP client that speaks from the loopback address ``source``."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=10)


def post_json(port: int, path: str, body: bytes, **headers: str) -> bytes:
    head = f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    head += "".join(f"{k.replace('_', '-')}: {v}\r\n" for k, v in headers.items())
    return head.encode() + b"\r\n" + body


def megabytes(total: int, chunk: int = 1 << 16) -> Iterator[bytes]:
    block = b"x" * chunk
    for _ in range(total // chunk):
        yield block


def chunked(parts: Iterator[bytes]) -> Iterator[bytes]:
    for part in parts:
        yield b"%x\r\n%s\r\n" % (len(part), part)
    yield b"0\r\n\r\n"


# -- request heads and bodies -------------------------------------------------------------


def test_a_request_head_sent_a_byte_at_a_time_is_closed_within_the_header_timeout(
    limited: tuple[int, int],
) -> None:
    port, _ = limited
    with dial(port, "127.0.0.11") as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        assert closed_by_server(sock, HEADER_TIMEOUT + SLACK, feed=b"x-slow: loris")


def test_a_socket_that_never_sends_a_byte_is_closed_within_the_header_timeout(
    limited: tuple[int, int],
) -> None:
    port, _ = limited
    with dial(port, "127.0.0.12") as sock:
        assert closed_by_server(sock, HEADER_TIMEOUT + SLACK)


def test_a_kept_alive_connection_is_held_to_the_header_timeout_on_its_next_request(
    limited: tuple[int, int],
) -> None:
    port, _ = limited
    with dial(port, "127.0.0.13") as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        assert response(sock)[0] == 200
        sock.sendall(b"GET /health HTTP/1.1\r\n")
        assert closed_by_server(sock, HEADER_TIMEOUT + SLACK, feed=b"x-slow: loris")


def test_a_body_that_stalls_is_closed_within_the_body_timeout(limited: tuple[int, int]) -> None:
    port, _ = limited
    with dial(port, "127.0.0.14") as sock:
        sock.sendall(post_json(port, "/api/tables", b'{"name": "A', content_length="200"))
        assert closed_by_server(sock, BODY_TIMEOUT + SLACK)


def test_a_huge_content_length_is_answered_413_at_once_without_reading_the_body(
    limited: tuple[int, int],
) -> None:
    port, _ = limited
    with dial(port, "127.0.0.15") as sock:
        sock.sendall(post_json(port, "/api/tables", b"{", content_length="2000000000"))
        status, _, body = response(sock, within=SLACK)
        assert (status, body["error"]) == (413, "too_big")
        assert closed_by_server(sock, 2 + SLACK)  # after a lingering close


def test_an_answer_before_a_small_body_keeps_the_connection_for_the_next_request(
    limited: tuple[int, int],
) -> None:
    """A 404 for an unknown table needs no body, and may go before the body is in; the
    client, told nothing else, sends its next request on the same connection: it is read
    and answered (the body in between dropped), not met with a closed socket."""
    port, _ = limited
    body = b'{"name": "Ana"}'
    with dial(port, "127.0.0.16") as sock:
        head = post_json(port, "/api/tables/NOPE42/join", b"", content_length=str(len(body)))
        sock.sendall(head)
        status, headers, answer = response(sock, within=SLACK)
        assert (status, answer["error"]) == (404, "not_found")
        assert headers.get("connection") != "close"
        sock.sendall(body)
        sock.sendall(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        status, _, health = response(sock, within=SLACK)
        assert status == 200 and health["ok"]


def test_a_connection_kept_after_an_early_answer_and_its_body_is_closed_when_idle(
    limited: tuple[int, int],
) -> None:
    """Reading the rest of the body stops uvicorn's keep-alive timer: the connection, idle
    after it, must still be closed in time (not hold its per-address slot for good)."""
    port, _ = limited
    body = b'{"name": "Ana"}'
    with dial(port, "127.0.0.23") as sock:
        sock.sendall(post_json(port, "/api/tables/NOPE42/join", b"", content_length=str(len(body))))
        assert response(sock, within=SLACK)[0] == 404
        sock.sendall(body)
        assert closed_by_server(sock, 5 + SLACK)  # the keep-alive's 5 s


def test_a_websocket_upgrade_pipelined_behind_a_request_outlives_the_body_timeout(
    limited: tuple[int, int],
) -> None:
    port, _ = limited
    with client("127.0.0.24") as http:
        reply = http.post(f"http://127.0.0.1:{port}/api/tables", json={"name": "Ana", **FAST})
        code = reply.json()["code"]
    upgrade = (f"GET /ws/{code} HTTP/1.1\r\nhost: 127.0.0.1\r\nupgrade: websocket\r\n"
               "connection: Upgrade\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
               "sec-websocket-version: 13\r\n\r\n").encode()  # fmt: skip
    with dial(port, "127.0.0.24") as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n" + upgrade)
        seen, deadline = b"", time.monotonic() + SLACK
        while b"101 Switching Protocols" not in seen and time.monotonic() < deadline:
            seen += sock.recv(65536)
        assert seen.startswith(b"HTTP/1.1 200") and b"101 Switching Protocols" in seen, seen
        # Before a hello is due (10 s), nothing may close it: not the body's 2-s deadline.
        assert not closed_by_server(sock, BODY_TIMEOUT + 3)


def test_a_request_head_over_the_limit_pipelined_behind_another_is_refused(
    limited: tuple[int, int],
) -> None:
    """A head that comes whole behind another request in the same read is bounded as one
    that comes in pieces: refused (400, closed)."""
    port, _ = limited
    big = b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nx-pad: " + b"a" * 20_000 + b"\r\n\r\n"
    with dial(port, "127.0.0.25") as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n" + big)
        sock.settimeout(SLACK)
        seen = b""
        with contextlib.suppress(ConnectionError):
            while chunk := sock.recv(65536):
                seen += chunk
    # Read whole, the big head is answered 400 after the first's 200; read in two parts
    # (a busy server), the bound on a head still incomplete closes the connection
    # at once. Never a second 200, never a connection kept.
    statuses = re.findall(rb"HTTP/1.1 (\d{3})", seen)
    assert statuses in ([b"200", b"400"], [b"400"], []), seen[:300]


def test_a_head_of_many_short_headers_over_the_limit_is_refused(
    limited: tuple[int, int],
) -> None:
    """The bound is on the whole head, not on one line: two thousand short headers."""
    port, _ = limited
    lines = b"".join(b"x-h%d: v\r\n" % i for i in range(2000))
    with dial(port, "127.0.0.27") as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n" + lines + b"\r\n")
        status, headers, body = response(sock, within=SLACK)
        assert (status, body["error"]) == (400, "malformed")
        assert "16384" in body["message"] and headers["connection"] == "close"
        assert closed_by_server(sock, SLACK)


def test_an_upgrade_to_another_protocol_is_answered_and_its_connection_let_go(
    limited: tuple[int, int],
) -> None:
    """An ``Upgrade`` the server does not speak (``h2c``) is answered as a plain request,
    and the connection, whose parser stops at an upgrade, is closed, not held."""
    port, _ = limited
    with dial(port, "127.0.0.28") as sock:
        sock.sendall(
            b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: Upgrade, "
            b"HTTP2-Settings\r\nupgrade: h2c\r\nhttp2-settings: AAMAAABkAAQAAP__\r\n\r\n"
        )
        status, _, body = response(sock, within=SLACK)
        assert status == 200 and body["ok"]
        assert closed_by_server(sock, BODY_TIMEOUT + SLACK)


def test_a_request_with_both_a_length_and_a_transfer_encoding_is_refused_and_closed(
    limited: tuple[int, int],
) -> None:
    """RFC 9112, 6.1: its length is the client's word against itself; the connection is not
    kept after it (nor its body read without the cap of a declared length)."""
    port, _ = limited
    with dial(port, "127.0.0.26") as sock:
        head = post_json(port, "/api/tables/NOPE42/join", b"", content_length="12",
                         transfer_encoding="chunked")  # fmt: skip
        sock.sendall(head + b"c\r\n" + b'{"name":"A"}' + b"\r\n0\r\n\r\n")
        assert response(sock, within=SLACK)[0] == 400
        assert closed_by_server(sock, SLACK)


def test_the_start_route_reads_its_body_under_the_cap_too(limited: tuple[int, int]) -> None:
    port, _ = limited
    with client("127.0.0.15") as http:
        reply = http.post(f"http://127.0.0.1:{port}/api/tables", json={"name": "Ana", **FAST})
        code = reply.json()["code"]
    with dial(port, "127.0.0.15") as sock:
        sock.sendall(post_json(port, f"/api/tables/{code}/start", b"{", content_length="99999"))
        status, _, body = response(sock, within=SLACK)
        assert (status, body["error"]) == (413, "too_big")


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_a_50_mb_body_is_refused_413_and_the_server_does_not_grow(
    limited: tuple[int, int], framing: str
) -> None:
    port, pid = limited
    size = 50 * 1024 * 1024
    source = {"content-length": "127.0.0.16", "chunked": "127.0.0.17"}[framing]
    with client("127.0.0.18") as http:  # warm the route up first
        http.post(f"http://127.0.0.1:{port}/api/tables", content=b"{}")
    before = peak_rss_kb(pid)
    with dial(port, source) as sock:
        if framing == "chunked":
            head = post_json(port, "/api/tables", b"", transfer_encoding="chunked")
            status, body = upload(sock, head, chunked(megabytes(size)))
        else:
            head = post_json(port, "/api/tables", b"", content_length=str(size))
            status, body = upload(sock, head, megabytes(size))
    assert (status, body["error"]) == (413, "too_big")
    grown_mb = (peak_rss_kb(pid) - before) / 1024
    assert grown_mb < 8, f"the server grew by {grown_mb:.1f} MB"


# -- connections per address --------------------------------------------------------------


def test_idle_sockets_past_the_cap_of_one_address_are_refused_while_another_is_served(
    limited: tuple[int, int],
) -> None:
    port, _ = limited
    for _attempt in range(3):  # the idle sockets must still be open when the next comes
        started = time.monotonic()
        idle = [dial(port, "127.0.0.21") for _ in range(PER_ADDRESS)]
        try:
            with dial(port, "127.0.0.21") as extra:
                status, headers, body = response(extra, within=SLACK)
            with client("127.0.0.22") as http:
                other = http.get(f"http://127.0.0.1:{port}/health")
        finally:
            for sock in idle:
                sock.close()
        if time.monotonic() - started < HEADER_TIMEOUT / 2:
            break
    assert (status, body["error"], headers["retry-after"]) == (429, "rate_limited", "1")
    assert other.status_code == 200
    time.sleep(0.2)  # the server notices the closes
    with client("127.0.0.21") as http:  # the address is welcome again
        assert http.get(f"http://127.0.0.1:{port}/health").status_code == 200


# -- rates per address --------------------------------------------------------------------


def test_tables_past_the_per_address_bucket_are_answered_429(limited: tuple[int, int]) -> None:
    port, _ = limited
    url = f"http://127.0.0.1:{port}/api/tables"
    with client("127.0.0.41") as http:
        made = [
            http.post(url, json={"name": "Ana", **FAST}).status_code for _ in range(TABLE_BURST)
        ]
        refused = http.post(url, json={"name": "Ana", **FAST})
    assert made == [201] * TABLE_BURST
    assert (refused.status_code, refused.json()["error"]) == (429, "too_many_tables")
    with client("127.0.0.42") as http:
        assert http.post(url, json={"name": "Bo", **FAST}).status_code == 201


def test_scrapes_of_the_metrics_past_their_own_bucket_are_answered_429(
    limited: tuple[int, int],
) -> None:
    """A scrape costs the node ms of its loop at load (a page's hundredfold): one address gets
    a few at once and one every 10 s (--scrapes-per-minute 6), far below the requests' 40 at
    once and two a second; its other requests are still served."""
    port, _ = limited
    with client("127.0.0.61") as http:
        began = time.monotonic()
        codes = [http.get(f"http://127.0.0.1:{port}/metrics").status_code for _ in range(12)]
        took = time.monotonic() - began
        refused = http.get(f"http://127.0.0.1:{port}/metrics")
        health = http.get(f"http://127.0.0.1:{port}/health")
    assert codes[:SCRAPE_BURST] == [200] * SCRAPE_BURST
    assert codes.count(200) <= SCRAPE_BURST + took / 10 + 1, (codes, took)
    assert (refused.status_code, refused.json()["error"]) == (429, "rate_limited")
    assert int(refused.headers["retry-after"]) >= 1
    assert health.status_code == 200
    with client("127.0.0.62") as http:
        assert http.get(f"http://127.0.0.1:{port}/metrics").status_code == 200


def test_requests_past_the_per_address_rate_are_answered_429(limited: tuple[int, int]) -> None:
    port, _ = limited
    url = f"http://127.0.0.1:{port}/health"
    replies: list[httpx.Response] = []
    began = time.monotonic()
    with client("127.0.0.51") as http:  # until 15 are refused: a busy machine sends slowly
        while sum(r.status_code == 429 for r in replies) < 15 and len(replies) < 300:
            replies.append(http.get(url))
    took = time.monotonic() - began
    codes = [r.status_code for r in replies]
    assert codes[: REQUEST_BURST - 5] == [200] * (REQUEST_BURST - 5)
    refused = [r for r in replies if r.status_code == 429]
    assert len(refused) >= 15
    # The burst, and two a second (--requests-per-second 2) for as long as it took.
    assert codes.count(200) <= REQUEST_BURST + 2 * took + 1, (codes.count(200), took)
    assert refused[0].json()["error"] == "rate_limited"
    assert int(refused[0].headers["retry-after"]) >= 1
    with client("127.0.0.52") as http:
        assert http.get(url).status_code == 200


# -- the log ------------------------------------------------------------------------------


def test_a_flood_of_bad_requests_leaves_a_few_lines_in_the_log(
    served: tuple[int, int, Path],
) -> None:
    port, _, log = served
    # The server is the module's: only what it logs from now on is this flood's.
    before = len(log.read_text())
    started = time.monotonic()
    for _ in range(200):
        with dial(port, "127.0.0.81") as sock:
            sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            assert response(sock)[0] == 400
    windows = time.monotonic() - started + 2  # of --log-interval 1 s
    deadline = time.monotonic() + SLACK
    while 'more like "Invalid HTTP request' not in log.read_text()[before:]:
        assert time.monotonic() < deadline, "no summary of the records held back"
        time.sleep(0.2)
    lines = [ln for ln in log.read_text()[before:].splitlines() if "Invalid HTTP request" in ln]
    summaries = [ln for ln in lines if "more like" in ln]
    assert len(lines) - len(summaries) <= 5 * windows  # at most 5 records a window through
    assert 1 <= len(summaries) <= windows + 1  # and one summary a window held back


# -- the descriptor limit -----------------------------------------------------------------


def _nofile_256() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def flood(port: int, count: int, first: int, head: bytes = b"") -> list[socket.socket]:
    """``count`` sockets, 50 from each of the loopback addresses 127.0.0.<first>, ...; each
    sends ``head`` and then nothing. Opened ten at a time, as fast as the server's accept
    queue takes them."""
    socks = []
    for i in range(count):
        source = (f"127.0.0.{first + i // 50}", 0)
        sock = socket.create_connection(("127.0.0.1", port), 10, source)
        if head:
            sock.sendall(head)
        socks.append(sock)
        if i % 10 == 9:
            time.sleep(0.02)
    return socks


def closed_or_busy(socks: list[socket.socket], within: float, want: int) -> tuple[int, int]:
    """How many of ``socks`` the server closed without a word, and how many it answered
    ``503``, watching until ``want`` of them have been one or the other, or ``within`` s."""
    closed: set[socket.socket] = set()
    busy: set[socket.socket] = set()
    deadline = time.monotonic() + within
    while len(closed) + len(busy) < want and time.monotonic() < deadline:
        readable, _, _ = select.select([s for s in socks if s not in closed | busy], [], [], 0.2)
        for sock in readable:
            try:
                data = sock.recv(64, socket.MSG_PEEK)
            except OSError:
                data = b""
            (busy if data.startswith(b"HTTP/1.1 503") else closed).add(sock)
    return len(closed), len(busy)


def health_until_busy(port: int, source: str, within: float) -> str | None:
    """``GET /health`` on a new connection each time until it is answered ``503``; the
    error code then (None if it never was within ``within`` seconds)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with dial(port, source) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
            status, _, body = response(sock, within=within)
        if status == 503:
            return str(body["error"])
        time.sleep(0.05)
    return None


def test_at_its_descriptor_limit_the_server_drops_idle_sockets_first_then_refuses_busy(
    tmp_path: Path,
) -> None:
    db = tmp_path / "fd.db"
    # RLIMIT_NOFILE 256 less a reserve of 156: a connection cap of 100.
    args = ["--header-timeout", "60", "--body-timeout", "60", "--fd-reserve", "156"]
    stall = b"POST /api/tables HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 100\r\n\r\n"
    with running_server(db, args=args, preexec_fn=_nofile_256, limit_loopback=True) as (
        base,
        port,
        pid,
    ):
        idle = flood(port, 150, first=60)  # one client on 3 addresses, past the cap
        stalled: list[socket.socket] = []
        try:
            # Sockets that only wait make room for a newcomer: the oldest is closed.
            assert closed_or_busy(idle, SLACK, want=50) == (50, 0)
            with client("127.0.0.70") as http:
                assert http.get(base + "/health", timeout=SLACK).status_code == 200
            # Connections with a request in hand (a body that never comes) keep their place:
            # past the cap, newcomers are answered 503 busy.
            stalled = flood(port, 150, first=64, head=stall)
            _, busy = closed_or_busy(stalled, SLACK, want=1)
            assert busy >= 1, "no connection past the cap was answered 503"
            # A newcomer now finds nobody to make room (once the server has read every
            # stalled head): it is answered 503 busy, at once.
            assert health_until_busy(port, "127.0.0.71", within=SLACK) == "busy"
            assert len(os.listdir(f"/proc/{pid}/fd")) < 256
        finally:
            for sock in idle + stalled:
                sock.close()
        deadline = time.monotonic() + SLACK
        with client("127.0.0.72") as http:
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if http.get(base + "/health", timeout=2).status_code == 200:
                        break
                assert time.monotonic() < deadline, "the server did not come back"
                time.sleep(0.2)
            made = http.post(base + "/api/tables", json={"name": "Ana", **FAST})
            assert made.status_code == 201  # the store still works
    log = db.with_suffix(".log").stat().st_size
    assert log < 64 * 1024, f"the log grew to {log} bytes"


# -- WebSocket connections (uvicorn in a thread) -------------------------------------------


async def _scope_echo(websocket: WebSocket) -> None:
    await websocket.accept()
    extensions = websocket.scope["extensions"]
    sock = extensions[SOCKET_KEY]
    tcp_info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    await websocket.send_json({"abort": hasattr(extensions[TRANSPORT_KEY], "abort"),
                               "tcp_info": len(tcp_info)})  # fmt: skip
    await websocket.receive_text()
    extensions[TRANSPORT_KEY].abort()


@pytest.mark.anyio
async def test_a_websocket_scope_carries_its_transport_and_socket_and_gives_back_its_slot() -> None:
    config = uvicorn_config(Limits(connections_per_address=2))
    gate = gate_of(config)
    app = Starlette(routes=[WebSocketRoute("/ws", _scope_echo)])
    with in_thread(app, config) as port:
        async with ws_connect(f"ws://127.0.0.1:{port}/ws") as ws:
            said = json.loads(await ws.recv())
            assert said == {"abort": True, "tcp_info": 104}
            assert gate.per_address.count("127.0.0.1") == 1
            await ws.send("abort, please")
            with pytest.raises(ConnectionClosed):
                await ws.recv()
        deadline = time.monotonic() + SLACK
        while gate.per_address.count("127.0.0.1"):
            assert time.monotonic() < deadline, "the slot was not given back"
            time.sleep(0.05)


@pytest.mark.anyio
async def test_a_player_plays_through_the_limited_protocols(tmp_path: Path) -> None:
    config = uvicorn_config(Limits())
    app = build_app(f"sqlite:///{tmp_path / 'ws.db'}", bot_pace=0.02)
    with in_thread(app, config) as port:
        reply = httpx.post(f"http://127.0.0.1:{port}/api/tables",
                           json={"name": "Ana", "seats": 2, **FAST}, timeout=10)  # fmt: skip
        seated = reply.json()
        async with Player.connect(f"ws://127.0.0.1:{port}", seated["code"], seated["token"]) as p:
            assert p.seat == 0
            assert gate_of(config).per_address.count("127.0.0.1") == 1


async def _hold(websocket: WebSocket) -> None:
    await websocket.accept()
    with contextlib.suppress(Exception):
        while True:
            await websocket.receive_text()


@pytest.mark.anyio
async def test_a_websocket_counts_against_the_cap_of_its_address_until_it_closes() -> None:
    config = uvicorn_config(Limits(connections_per_address=2))
    app = Starlette(routes=[WebSocketRoute("/ws", _hold)])
    with in_thread(app, config) as port:
        async with ws_connect(f"ws://127.0.0.1:{port}/ws"), ws_connect(f"ws://127.0.0.1:{port}/ws"):
            with dial(port, "127.0.0.1") as third:
                status, _, body = response(third, within=SLACK)
            assert (status, body["error"]) == (429, "rate_limited")
            with dial(port, "127.0.0.2") as elsewhere:
                elsewhere.sendall(b"GET /ws HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
                assert response(elsewhere, within=SLACK)[0] != 429
        deadline = time.monotonic() + SLACK
        while gate_of(config).per_address.count("127.0.0.1"):
            assert time.monotonic() < deadline, "the slots were not given back"
            time.sleep(0.05)


@pytest.mark.parametrize("pieces", [1, 20])
def test_a_request_head_over_the_limit_is_refused_however_it_arrives(
    limited: tuple[int, int], pieces: int
) -> None:
    port, _ = limited
    head = b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: " + b"a" * 20_000 + b"\r\n\r\n"
    with dial(port, f"127.0.0.{70 + pieces}") as sock:
        step = len(head) // pieces + 1
        with contextlib.suppress(OSError):  # the server may close before the last piece
            for i in range(0, len(head), step):
                sock.sendall(head[i : i + step])
        sock.settimeout(10)
        assert sock.recv(64).startswith(b"HTTP/1.1 400")
    with dial(port, f"127.0.0.{80 + pieces}") as sock:  # a head within the limit is served
        sock.sendall(
            b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nx-ok: " + b"a" * 8000 + b"\r\n\r\n"
        )
        sock.settimeout(10)
        assert sock.recv(64).startswith(b"HTTP/1.1 200")
