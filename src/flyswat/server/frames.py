"""WebSocket frames on the server's side of an open connection, sans I/O (RFC 6455 §5).

After the opening handshake, a connection's bytes are read by one :class:`Reader` and the
messages it returns go straight to the table (:class:`flyswat.server.connection.Session`):
no queue, no task woken per message. It checks what a server must (every client frame
masked, no reserved bits, control frames short and whole, fragments in order, text in UTF-8,
nothing over the size cap) and raises :class:`BadFrame` with the close code to fail the
connection with. The server writes its own frames unmasked (:func:`text_frame`,
:func:`close_frame`); a broadcast's frame is made once for every receiver.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from websockets.speedups import apply_mask

CONT, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA

#: Close codes (RFC 6455 §7.4.1).
NORMAL, GOING_AWAY, PROTOCOL_ERROR, INVALID_DATA, TOO_BIG = 1000, 1001, 1002, 1007, 1009


class BadFrame(Exception):
    """The client broke the framing: fail the connection with close ``code``."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class Reader:
    """A client's frames: :meth:`feed` bytes as they arrive, get whole messages back as
    ``(opcode, payload)`` — ``TEXT`` (its payload checked to be UTF-8), ``BINARY``,
    ``CLOSE``, ``PING`` or ``PONG``. A message may come in fragments; at most ``max_size``
    bytes of it are kept, and a frame that would pass that is refused before it is read."""

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self._buffer = bytearray()
        self._parts: list[bytes] = []
        self._opcode: int | None = None  # of the fragmented message being read
        self._size = 0

    def one_text(self, data: bytes) -> bytes | None:
        """The payload of ``data`` when it is exactly one whole, short (under 126 bytes),
        masked, valid text frame and nothing else is being read — a client's usual message,
        taken without :meth:`feed`'s buffer and loop; None for anything else, which
        :meth:`feed` then reads (and refuses, if it must)."""
        if self._buffer or self._opcode is not None or len(data) < 6 or data[0] != 0x81:
            return None
        n = data[1] ^ 0x80  # masked: the bit set, the length under it
        if not 0 <= n < 126 or len(data) != 6 + n or n > self.max_size:
            return None
        payload: bytes = apply_mask(data[6:], data[2:6])
        try:
            payload.decode()
        except UnicodeDecodeError:
            return None
        return payload

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        """The messages completed by ``data``; raises :class:`BadFrame`."""
        buf = self._buffer
        buf += data
        out: list[tuple[int, bytes]] = []
        pos, end = 0, len(buf)
        while end - pos >= 2:
            first, second = buf[pos], buf[pos + 1]
            if first & 0x70:
                raise BadFrame(PROTOCOL_ERROR, "reserved bits set (no extension was agreed)")
            if not second & 0x80:
                raise BadFrame(PROTOCOL_ERROR, "a client's frames must be masked")
            opcode, fin, length, head = first & 0x0F, first & 0x80, second & 0x7F, 2
            if length == 126:
                if end - pos < 4:
                    break
                length, head = int.from_bytes(buf[pos + 2 : pos + 4], "big"), 4
            elif length == 127:
                if end - pos < 10:
                    break
                length, head = int.from_bytes(buf[pos + 2 : pos + 10], "big"), 10
            if opcode >= CLOSE:
                if not fin or length > 125:
                    raise BadFrame(PROTOCOL_ERROR, "a control frame is whole and short")
            elif length + self._size > self.max_size:
                raise BadFrame(TOO_BIG, f"a message is at most {self.max_size} bytes")
            start = pos + head + 4
            if end - start < length:
                break
            payload = apply_mask(buf[start : start + length], buf[pos + head : start])
            pos = start + length
            message = self._message(opcode, bool(fin), payload)
            if message is not None:
                out.append(message)
        if pos:
            del buf[:pos]
        return out

    def _message(self, opcode: int, fin: bool, payload: bytes) -> tuple[int, bytes] | None:
        if opcode >= CLOSE:
            if opcode not in (CLOSE, PING, PONG):
                raise BadFrame(PROTOCOL_ERROR, f"unknown opcode {opcode}")
            return opcode, payload
        if opcode == CONT:
            if self._opcode is None:
                raise BadFrame(PROTOCOL_ERROR, "a continuation with no message to continue")
            self._parts.append(payload)
            self._size += len(payload)
            if not fin:
                return None
            opcode, payload = self._opcode, b"".join(self._parts)
            self._opcode, self._parts, self._size = None, [], 0
        elif opcode in (TEXT, BINARY):
            if self._opcode is not None:
                raise BadFrame(PROTOCOL_ERROR, "a new message inside a fragmented one")
            if not fin:
                self._opcode, self._parts, self._size = opcode, [payload], len(payload)
                return None
        else:
            raise BadFrame(PROTOCOL_ERROR, f"unknown opcode {opcode}")
        if opcode == TEXT:
            try:
                payload.decode()
            except UnicodeDecodeError:
                raise BadFrame(INVALID_DATA, "a text message must be UTF-8") from None
        return opcode, payload


class Receiving(Protocol):
    """Who is told each whole message of a socket (``server/connection.py``'s ``Session``)."""

    def message(self, payload: bytes, text: bool) -> None:
        """A whole client message (a text one is UTF-8)."""


class Socket(Protocol):
    """An accepted socket whose frames :func:`read` reads (``server/transport.py``): its
    transport, whether it sent its close frame, and its closing handshake."""

    transport: asyncio.Transport
    close_sent: bool

    def close(self, code: int, reason: str = "") -> None:
        """Fail or end the connection with ``code``: a close frame, then hang up."""

    def closing(self, payload: bytes) -> None:
        """The client's close frame arrived: answer it, hang up."""


def read(sock: Socket, reader: Reader, receiver: Receiving | None, data: bytes) -> None:
    """What a read of ``sock`` brought (``data``): each whole message to ``receiver``, a
    ping answered, a close frame to the closing handshake, a broken frame failing the
    connection. Compiled (``hatch_build.py``), as the table behind it is: the path of every
    message of every socket, with no frame of the interpreter's on it (:class:`Reading`)."""
    if sock.close_sent and sock.transport.is_closing():
        return
    payload = reader.one_text(data)
    if payload is not None:  # the usual case: one whole short text message
        if receiver is not None and not sock.close_sent:
            receiver.message(payload, True)
        return
    try:
        messages = reader.feed(data)
    except BadFrame as e:
        sock.close(e.code, e.reason)
        return
    ping: bytes | None = None  # a pong answers the read's last ping only (RFC 6455 §5.5.3)
    bye: bytes | None = None
    for opcode, body in messages:
        if opcode in (TEXT, BINARY):
            if receiver is not None and not sock.close_sent:
                receiver.message(body, opcode == TEXT)
        elif opcode == PING:
            ping = body
        elif opcode == CLOSE:
            bye = body  # nothing after it is read
            break
    if ping is not None and not sock.close_sent:
        sock.transport.write(frame(PONG, ping))
    if bye is not None:
        sock.closing(bye)


class Owner(Socket, Protocol):
    """The protocol object of an accepted socket, which :class:`Reading` stands in for."""

    def connection_lost(self, exc: Exception | None) -> None: ...

    def eof_received(self) -> bool | None: ...

    def pause_writing(self) -> None: ...

    def resume_writing(self) -> None: ...


class Reading:
    """A socket's protocol once its receiver has taken it over: the transport hands each
    read straight to :func:`read`, compiled, where an interpreted protocol method and its
    frame stood between every read and the table (docs/BENCHMARKS.md, *A fast sitting: the
    anchor to 10,000, and the read compiled*). What is not a read goes to the socket's own
    protocol, ``owner``."""

    def __init__(self, owner: Owner, reader: Reader, receiver: Receiving) -> None:
        self.owner = owner
        self.reader = reader
        self.receiver = receiver

    def data_received(self, data: bytes) -> None:
        read(self.owner, self.reader, self.receiver, data)

    def eof_received(self) -> bool | None:
        return self.owner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.owner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.owner.pause_writing()

    def resume_writing(self) -> None:
        self.owner.resume_writing()


def close_code(payload: bytes) -> tuple[int, str]:
    """A close frame's code and reason (1005: none given); raises :class:`BadFrame`."""
    if not payload:
        return 1005, ""
    if len(payload) == 1:
        raise BadFrame(PROTOCOL_ERROR, "a close frame's code is two bytes")
    code = int.from_bytes(payload[:2], "big")
    if not (1000 <= code < 5000) or code in (1004, 1005, 1006, 1015):
        raise BadFrame(PROTOCOL_ERROR, f"close code {code} may not be sent")
    try:
        return code, payload[2:].decode()
    except UnicodeDecodeError:
        raise BadFrame(INVALID_DATA, "a close reason must be UTF-8") from None


def frame(opcode: int, payload: bytes) -> bytes:
    """An unfragmented, unmasked frame (the bytes a server writes).

    Bytes are put together with ``join``, never ``+``: compiled by mypyc (this module is,
    ``hatch_build.py``), ``a + b`` of two bytes leaks a block each time — every frame the
    server wrote stayed in memory (docs/BENCHMARKS.md, *The compiled build's leak*)."""
    n = len(payload)
    if n < 126:
        return b"".join((bytes((0x80 | opcode, n)), payload))
    if n < 65536:
        return b"".join((bytes((0x80 | opcode, 126)), n.to_bytes(2, "big"), payload))
    return b"".join((bytes((0x80 | opcode, 127)), n.to_bytes(8, "big"), payload))


def text_frame(payload: bytes) -> bytes:
    """A text frame of ``payload``, which is UTF-8: the same bytes for every receiver."""
    return frame(TEXT, payload)


def close_frame(code: int, reason: str = "") -> bytes:
    """A close frame with ``code`` and ``reason`` (cut to fit a control frame)."""
    return frame(CLOSE, b"".join((code.to_bytes(2, "big"), reason.encode()[:123])))
