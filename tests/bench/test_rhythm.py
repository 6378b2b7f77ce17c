"""The slap-table rhythm's generator against a real ``flyswat serve`` process, and its codec.

Two tables play short games for a few seconds: rounds are measured, no join fails, no error
comes back, and finished games are replaced by new tables. The figures themselves are the
benchmark's (``bench/rhythm.py``), never asserted here.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from harness import wire
from harness.generator import Generator
from harness.procs import ServerProcess
from harness.rhythm import RhythmPlan
from harness.server import free_port
from rhythm import BETWEEN_CALLBACKS, figures, stall_spans, stalls_in, verdict


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    running = ServerProcess(f"sqlite:///{tmp_path / 'rhythm.db'}", free_port(), tmp_path / "log")
    running.start()
    try:
        yield running
    finally:
        running.stop()


async def play(plan: RhythmPlan) -> dict[str, Any]:
    gen = Generator(plan)
    try:
        await gen.setup()
        return await gen.measure(gen.loop.time())
    finally:
        await gen.close()


@pytest.mark.parametrize(("client", "deflate"), [("wire", False), ("websockets", True)])
def test_two_tables_play_the_rhythm_and_their_rounds_are_measured(
    server: ServerProcess, client: str, deflate: bool
) -> None:
    # Quick reveals and short games (22 cards), so that games end and tables are replaced.
    plan = RhythmPlan(server.http, tables=2, reveal_s=0.25, duration_s=4.0, timeout_s=1.0,
                      options={"remove": 90}, client=client, deflate=deflate)  # fmt: skip
    report = asyncio.run(play(plan))
    assert report["round_ms"], "no round measured"
    assert report["rounds"] >= len(report["round_ms"]) > 0
    assert report["errors"] == {}
    assert report["total"].get("failed_joins", 0) == 0
    assert report["total"].get("disconnects", 0) == 0
    assert report["total"]["joins"] >= 8
    assert report["sent_per_s"] > 0 and report["received_per_s"] > 0
    fig = figures([report], {"server": 0.1, "self": 0.01})
    assert fig["rounds_measured"] == len(report["round_ms"])
    assert fig["failed_joins"] == 0 and fig["errors"] == {}
    # A pages process apart (--pages-apart) is the server's side, not the generator's load.
    apart = figures([report], {"server": 0.1, "self": 0.01, "pages": 0.2})
    assert apart["generator_cpu"] == fig["generator_cpu"] and apart["pages_cpu"] == 0.2
    assert fig["pages_cpu"] is None


def test_a_step_fails_on_a_slow_p99_a_failed_join_or_a_dead_server() -> None:
    good = {"last_action_ms": {"p99": 40.0}, "timeout_share": 0.0, "failed_joins": 0,
            "alive": True, "rounds_measured": 10}  # fmt: skip
    assert verdict(good) == (True, [])
    assert not verdict(good | {"last_action_ms": {"p99": 101.0}})[0]
    assert not verdict(good | {"timeout_share": 0.02})[0]
    assert not verdict(good | {"failed_joins": 1})[0]
    assert not verdict(good | {"alive": False})[0]
    assert not verdict(good | {"rounds_measured": 0})[0]


class FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def close(self) -> None:
        self.closed = True


def server_frame(
    payload: bytes, opcode: int = wire.TEXT, fin: bool = True, rsv1: bool = False
) -> bytes:
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode])
    if n < 126:
        head += bytes([n])
    elif n < 1 << 16:
        head += bytes([126]) + n.to_bytes(2, "big")
    else:
        head += bytes([127]) + n.to_bytes(8, "big")
    return head + payload


def test_the_codec_reads_frames_however_the_bytes_are_cut() -> None:
    async def run() -> tuple[list[bytes], FakeTransport, list[bool]]:
        got: list[bytes] = []
        lost: list[bool] = []
        sock = wire.WireSocket(b"GET", lambda m, now: got.append(m), lost.append)
        transport = FakeTransport()
        sock.connection_made(transport)
        big = b"x" * 70_000
        stream = (
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"
            + server_frame(b'{"type":"ping","id":7}')
            + server_frame(b"y" * 300)
            + server_frame(big)
            + server_frame(b"hel", fin=False)
            + server_frame(b"lo", wire.CONT)
            + server_frame(b"!", wire.PING)
            + server_frame(b"\x03\xe8", wire.CLOSE)
        )
        for i in range(0, len(stream), 7):  # the worst case: a few bytes at a time
            sock.data_received(stream[i : i + 7])
        sock.connection_lost(None)
        assert sock.opened.done()
        return got, transport, lost

    got, transport, lost = asyncio.run(run())
    assert got == [b'{"type":"ping","id":7}', b"y" * 300, b"x" * 70_000, b"hello"]
    # The request, then a pong for the ping and a close for the close, masked, zero key.
    assert transport.written[1:] == [
        wire.frame(b"!", wire.PONG),
        wire.frame(b"\x03\xe8", wire.CLOSE),
    ]
    assert transport.closed and lost == [False]  # the server closed: not "by us"


def test_client_frames_are_masked_with_the_zero_key() -> None:
    assert wire.frame(b"abc") == b"\x81\x83\x00\x00\x00\x00abc"
    long = wire.frame(b"z" * 200)
    assert long[:4] == b"\x81\xfe\x00\xc8" and long[4:8] == b"\x00" * 4 and long[8:] == b"z" * 200


def test_the_codec_inflates_what_a_deflating_server_sends() -> None:
    deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)

    def deflated(text: bytes) -> bytes:
        out = deflate.compress(text) + deflate.flush(zlib.Z_SYNC_FLUSH)
        assert out.endswith(b"\x00\x00\xff\xff")
        return out[:-4]

    async def run() -> list[bytes]:
        got: list[bytes] = []
        sock = wire.WireSocket(b"GET", lambda m, now: got.append(m), lambda by_us: None)
        sock.connection_made(FakeTransport())
        first, second = deflated(b'{"type":"hands"}'), deflated(b'{"type":"hands","x":1}')
        sock.data_received(
            b"HTTP/1.1 101 Switching Protocols\r\n"
            b"Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n"
            + server_frame(first, rsv1=True)
            + server_frame(b"plain")
            + server_frame(second[:3], rsv1=True, fin=False)
            + server_frame(second[3:], wire.CONT)
        )
        return got

    assert asyncio.run(run()) == [b'{"type":"hands"}', b"plain", b'{"type":"hands","x":1}']
    assert b"permessage-deflate" in wire.upgrade_request("127.0.0.1", 80, "/ws/X", deflate=True)
    assert b"Extensions" not in wire.upgrade_request("127.0.0.1", 80, "/ws/X")


def test_the_stalls_of_a_servers_log_are_read_with_where_the_loop_was() -> None:
    log = (
        "INFO:     127.0.0.1:5 - GET /metrics 200\n"
        "WARNING:  flyswat.stall: the event loop is 26 ms late; it is in:\n"
        '  File "/x/site-packages/uvicorn/server.py", line 86, in run\n'
        '  File "/x/src/flyswat/server/executor.py", line 100, in run\n'
        "    self.tell(x)\n"
        '  File "/x/src/flyswat/table/turns.py", line 97, in tick\n'
        "    ctx.tell_all()\n"
        "WARNING:  flyswat.stall: the event loop stalled for 31 ms\n"
        "WARNING:  flyswat.stall: the event loop has not run for 40 ms, idle: the process was "
        "not given a core (a busy machine)\n"
        "WARNING:  flyswat.stall: the event loop stalled for 44 ms (of the last 94 ms: ran 12, "
        "waited for a core 70, asleep 12)\n"
        "WARNING:  flyswat.stall: the event loop stalled for 60 ms (of the last 110 ms: ran 90, "
        "waited for a core 0, asleep 20)\n"
    )
    lengths, causes, mostly = stalls_in(log)
    assert lengths == [31.0, 44.0, 60.0]
    assert causes == {"tick (flyswat/table/turns.py)": 1, BETWEEN_CALLBACKS: 1}
    assert mostly == {"waited for a core": 1, "ran": 1}  # the first line tells no split
    assert stalls_in("INFO: nothing stalled\n") == ([], {}, {})


def test_what_a_stalls_span_held_is_read_as_the_server_writes_it() -> None:
    """The bench reads the counts a server's stall line gives in the words
    :func:`~flyswat.server.metrics.span_held` writes them; a line without them (an older
    server) gives none."""
    from flyswat.server.metrics import span_held, stall_split

    split = stall_split((100.0, 5.0), (190.0, 6.0), 97.0)
    held = span_held((10, 20, 30, 40, 50, 60), (1510, 2420, 330, 840, 52, 63))
    line = f"WARNING:  flyswat.stall: the event loop stalled for 47 ms{split}{held}"
    older = "WARNING:  flyswat.stall: the event loop stalled for 31 ms\n"
    want = {"ms": 47, "span_ms": 97, "ran_ms": 90, "in": 1500, "out": 2400, "commands": 300,
            "writes": 800, "commits": 2, "setups": 3}  # fmt: skip
    assert stall_spans(older + line + "\n") == [want]
    end = 1_796_687_821.5  # as the server writes it: the span's end, in UTC to the ms
    at = f"; it ended at {datetime.fromtimestamp(end, UTC).isoformat(timespec='milliseconds')}\n"
    looks = [(end - 0.2, 4.0), (end - 0.05, 6.5), (end - 0.01, 2.0), (end + 0.3, 9.0)]
    assert stall_spans(line + at, looks, since=end - 100) == [want | {"at_s": 100, "look_ms": 8.5}]
    assert stalls_in(older + line)[0] == [31.0, 47.0]
