"""The server's WebSocket frames (RFC 6455 §5): the reader sans I/O, and a real socket that
breaks the framing failed with the right close code, nothing handed to its table."""

from __future__ import annotations

import asyncio
import base64
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st
from websockets.frames import Frame, Opcode
from websockets.streams import StreamReader

from flyswat.server import frames
from flyswat.server.frames import BINARY, CLOSE, CONT, PING, PONG, TEXT, BadFrame, Reader

from .conftest import Live, create_table


def client_frame(opcode: int, payload: bytes, fin: bool = True, rsv: int = 0, mask: bool = True,
                 length: int | None = None) -> bytes:  # fmt: skip
    """A frame as a client writes it (masked)."""
    n = len(payload) if length is None else length
    first = (0x80 if fin else 0) | rsv | opcode
    if n < 126:
        head = bytes((first, (0x80 if mask else 0) | n))
    elif n < 65536:
        head = bytes((first, (0x80 if mask else 0) | 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((first, (0x80 if mask else 0) | 127)) + n.to_bytes(8, "big")
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def test_a_masked_text_frame_is_one_message() -> None:
    assert Reader(1024).feed(client_frame(TEXT, b'{"type":"pong","id":7}')) == [
        (TEXT, b'{"type":"pong","id":7}')
    ]


def test_frames_split_anywhere_and_joined_anyhow_read_the_same() -> None:
    data = b"".join(client_frame(TEXT, b"m%d" % i * 50) for i in range(5))
    data += client_frame(BINARY, bytes(300))  # a 16-bit length
    whole = Reader(1024).feed(data)
    assert len(whole) == 6
    for step in (1, 2, 3, 7, 64):
        reader, got = Reader(1024), []
        for i in range(0, len(data), step):
            got += reader.feed(data[i : i + step])
        assert got == whole


def test_a_fragmented_message_is_put_back_together_with_control_frames_between() -> None:
    reader = Reader(1024)
    assert reader.feed(client_frame(TEXT, b'{"type":', fin=False)) == []
    assert reader.feed(client_frame(PING, b"hi")) == [(PING, b"hi")]
    assert reader.feed(client_frame(CONT, b'"hello"}')) == [(TEXT, b'{"type":"hello"}')]


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (client_frame(TEXT, b"x", mask=False), frames.PROTOCOL_ERROR),
        (client_frame(TEXT, b"x", rsv=0x40), frames.PROTOCOL_ERROR),
        (client_frame(PING, b"x" * 126), frames.PROTOCOL_ERROR),
        (client_frame(PING, b"x", fin=False), frames.PROTOCOL_ERROR),
        (client_frame(CONT, b"x"), frames.PROTOCOL_ERROR),
        (client_frame(TEXT, b"a", fin=False) + client_frame(TEXT, b"b"), frames.PROTOCOL_ERROR),
        (client_frame(0x3, b"x"), frames.PROTOCOL_ERROR),
        (client_frame(0xB, b"x"), frames.PROTOCOL_ERROR),
        (client_frame(TEXT, b"\xff\xfe"), frames.INVALID_DATA),
        (client_frame(TEXT, b"x" * 2000), frames.TOO_BIG),
    ],
    ids=[
        "unmasked",
        "reserved bit",
        "long ping",
        "fragmented ping",
        "lone continuation",
        "message in a message",
        "opcode 3",
        "opcode 11",
        "not UTF-8",
        "too big",
    ],
)
def test_a_frame_that_breaks_the_framing_fails_the_connection(data: bytes, code: int) -> None:
    with pytest.raises(BadFrame) as refused:
        Reader(1024).feed(data)
    assert refused.value.code == code


def test_a_frame_over_the_cap_is_refused_by_its_head_before_its_body_is_read() -> None:
    head = client_frame(BINARY, b"", length=1 << 40)[:10]  # claims a terabyte, sends 10 bytes
    with pytest.raises(BadFrame) as refused:
        Reader(1 << 20).feed(head)
    assert refused.value.code == frames.TOO_BIG


def test_fragments_that_add_up_past_the_cap_are_refused() -> None:
    reader = Reader(1000)
    reader.feed(client_frame(TEXT, b"x" * 600, fin=False))
    with pytest.raises(BadFrame):
        reader.feed(client_frame(CONT, b"x" * 600))


def test_close_codes_are_read_and_checked() -> None:
    assert frames.close_code(b"") == (1005, "")
    assert frames.close_code((4000).to_bytes(2, "big") + b"bye") == (4000, "bye")
    for bad in (b"\x03", (1005).to_bytes(2, "big"), (999).to_bytes(2, "big")):
        with pytest.raises(BadFrame):
            frames.close_code(bad)
    assert frames.close_code(frames.close_frame(4302, "moved")[2:]) == (4302, "moved")


# -- a real socket ---------------------------------------------------------------------


async def handshake(live: Live, code: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = live.http.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        f"GET /ws/{code} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        .encode()
    )  # fmt: skip
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    assert head.startswith(b"HTTP/1.1 101")
    return reader, writer


async def server_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    first, second = await asyncio.wait_for(reader.readexactly(2), 10)
    n = second & 0x7F
    if n == 126:
        n = int.from_bytes(await reader.readexactly(2), "big")
    elif n == 127:
        n = int.from_bytes(await reader.readexactly(8), "big")
    assert not second & 0x80, "a server's frames are not masked"
    return first & 0x0F, await reader.readexactly(n)


async def until(reader: asyncio.StreamReader, opcode: int) -> bytes:
    while True:
        got, payload = await server_frame(reader)
        if got == opcode:
            return payload


@pytest.mark.anyio
async def test_a_hello_in_fragments_is_greeted_and_a_ping_frame_answered(live: Live) -> None:
    seated = await create_table(live)
    reader, writer = await handshake(live, seated["code"])
    hello = b'{"type":"hello","token":"%s"}' % seated["token"].encode()
    writer.write(client_frame(TEXT, hello[:9], fin=False) + client_frame(PING, b"are you there"))
    writer.write(client_frame(CONT, hello[9:20], fin=False) + client_frame(CONT, hello[20:]))
    assert await until(reader, PONG) == b"are you there"
    assert b'"type":"welcome"' in await until(reader, TEXT)
    writer.write(client_frame(CLOSE, (1000).to_bytes(2, "big")))
    assert await until(reader, CLOSE) == (1000).to_bytes(2, "big")  # the closing handshake
    assert await asyncio.wait_for(reader.read(), 10) == b""  # and the server hangs up
    writer.close()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (client_frame(TEXT, b'{"type":"hello"}', mask=False), frames.PROTOCOL_ERROR),
        (client_frame(TEXT, b'{"type":"hello","token":"\xff"}'), frames.INVALID_DATA),
        (client_frame(TEXT, b"", length=1 << 30)[:10], frames.TOO_BIG),
    ],
    ids=["unmasked", "not UTF-8", "a gigabyte announced"],
)
async def test_a_socket_that_breaks_the_framing_is_closed_with_its_code(
    live: Live, frame: bytes, code: int
) -> None:
    seated = await create_table(live)
    reader, writer = await handshake(live, seated["code"])
    writer.write(frame)
    payload = await until(reader, CLOSE)
    assert int.from_bytes(payload[:2], "big") == code
    assert await asyncio.wait_for(reader.read(), 10) == b""
    writer.close()
    table = live.app.state.runner.directory.tables[seated["code"]]
    assert not table.conns  # nothing reached the table: no seat was greeted


def test_the_server_writes_frames_of_every_length_that_a_websocket_client_reads() -> None:
    for n in (0, 125, 126, 65535, 65536):
        stream = StreamReader()
        stream.feed_data(frames.text_frame(b"x" * n) + frames.close_frame(4302, "moved"))
        parser = Frame.parse(stream.read_exact, mask=False)
        with pytest.raises(StopIteration) as read:
            next(parser)
        assert (read.value.value.opcode, read.value.value.data) == (Opcode.TEXT, b"x" * n)
        parser = Frame.parse(stream.read_exact, mask=False)
        with pytest.raises(StopIteration) as read:
            next(parser)
        assert read.value.value.opcode == Opcode.CLOSE
        assert read.value.value.data == (4302).to_bytes(2, "big") + b"moved"


def test_one_short_text_frame_is_read_on_the_short_way() -> None:
    data = client_frame(TEXT, b'{"type":"pong","id":7}')
    assert Reader(1 << 20).one_text(data) == b'{"type":"pong","id":7}'


@pytest.mark.parametrize(
    "data",
    [
        client_frame(TEXT, b"x" * 126),  # a longer head
        client_frame(TEXT, b"abc", fin=False),  # a fragment
        client_frame(BINARY, b"abc"),
        client_frame(TEXT, b"abc", mask=False),
        client_frame(TEXT, b"abc", rsv=0x40),
        client_frame(TEXT, b"\xff\xfe"),  # not UTF-8
        client_frame(TEXT, b"abc") + client_frame(TEXT, b"d"),  # two frames
        client_frame(TEXT, b"abc")[:-1],  # not whole
        client_frame(PING, b"abc"),
    ],
    ids=["long", "fragment", "binary", "unmasked", "reserved", "not-utf8", "two", "cut", "ping"],
)
def test_anything_else_is_left_to_the_reader(data: bytes) -> None:
    assert Reader(1 << 20).one_text(data) is None


def test_the_short_way_never_passes_the_size_cap() -> None:
    assert Reader(3).one_text(client_frame(TEXT, b"abcd")) is None


@given(st.binary(min_size=2, max_size=40), st.binary(min_size=4, max_size=4))
def test_the_short_way_agrees_with_the_reader(payload: bytes, key: bytes) -> None:
    n = len(payload)
    masked = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    for first in (0x81, 0x82, 0x01, 0xC1):
        data = bytes((first, 0x80 | n)) + key + masked
        got = Reader(1 << 20).one_text(data)
        if got is None:
            continue
        assert Reader(1 << 20).feed(data) == [(TEXT, got)]


class _Socket:
    """What :func:`frames.read` reads for: a transport that keeps what is written, the
    closing handshake's calls, and a receiver that keeps what it is told."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.transport = self  # the transport's part, here
        self.close_sent = False
        self.closed_with: list[tuple[int, str]] = []
        self.closings: list[bytes] = []
        self.told: list[tuple[bytes, bool]] = []

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def is_closing(self) -> bool:
        return bool(self.closed_with or self.closings)

    def close(self, code: int, reason: str = "") -> None:
        self.close_sent = True
        self.closed_with.append((code, reason))

    def closing(self, payload: bytes) -> None:
        self.closings.append(payload)

    def message(self, payload: bytes, text: bool) -> None:
        self.told.append((payload, text))


def test_a_read_tells_each_message_answers_a_ping_and_stops_at_a_close_frame() -> None:
    sock, reader = _Socket(), Reader(1 << 20)
    frames.read(sock, reader, sock, client_frame(TEXT, b'{"type":"done"}'))  # the short way
    bye = (1000).to_bytes(2, "big")
    data = (client_frame(TEXT, b"a") + client_frame(PING, b"p") + client_frame(BINARY, b"b")
            + client_frame(CLOSE, bye) + client_frame(TEXT, b"after"))  # fmt: skip
    frames.read(sock, reader, sock, data)
    assert sock.told == [(b'{"type":"done"}', True), (b"a", True), (b"b", False)]
    assert sock.written == [frames.frame(PONG, b"p")]
    assert sock.closings == [bye]  # and nothing read after it


def test_once_the_servers_close_frame_is_sent_nothing_more_is_told_or_answered() -> None:
    sock, reader = _Socket(), Reader(1 << 20)
    frames.read(sock, reader, sock, client_frame(TEXT, b"x" * 200, rsv=0x40))  # broken
    assert sock.closed_with == [
        (frames.PROTOCOL_ERROR, "reserved bits set (no extension was agreed)")
    ]
    sock2, reader2 = _Socket(), Reader(1 << 20)
    sock2.close_sent = True  # a close frame sent, the socket not yet closing
    frames.read(sock2, reader2, sock2, client_frame(TEXT, b"late"))
    frames.read(sock2, reader2, sock2, client_frame(TEXT, b"a") + client_frame(PING, b"p"))
    assert sock2.told == [] and sock2.written == []


def test_a_read_of_many_ping_frames_is_answered_with_one_pong_for_the_last() -> None:
    """RFC 6455 §5.5.3 lets a pong answer only the most recent ping: a client that packs a
    read with ping frames gets one write back, not one a frame."""
    sock, reader = _Socket(), Reader(1 << 20)
    frames.read(sock, reader, sock, b"".join(client_frame(PING, b"%d" % i) for i in range(50)))
    assert sock.written == [frames.frame(PONG, b"49")]
    bye = (1000).to_bytes(2, "big")
    frames.read(sock, reader, sock, client_frame(PING, b"x") + client_frame(CLOSE, bye))
    assert sock.written[1:] == [frames.frame(PONG, b"x")] and sock.closings == [bye]
