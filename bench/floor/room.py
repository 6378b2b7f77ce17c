"""The floor's bare room in Python: the same room as ``room.js``, on uvloop, with flyswat's
own frame reader and writer (:mod:`flyswat.server.frames`) and its pong shortcut — what one
asyncio callback per message costs before any game or store. See ``bench/floor.py``.

    python room.py <port>
"""

from __future__ import annotations

import asyncio
import sys

import orjson
import uvloop
from websockets.utils import accept_key

from flyswat.server.connection import ping_ids, pong_id
from flyswat.server.frames import TEXT, Reader, text_frame

counts = {"received": 0, "sent": 0}


class Room:
    __slots__ = ("closer", "open_turn", "seats", "slaps", "timer", "turn")

    def __init__(self) -> None:
        self.seats: list[Socket] = []
        self.turn = 0
        self.open_turn = 0
        self.slaps: list[int] = []
        self.timer: asyncio.TimerHandle | None = None
        self.closer: asyncio.TimerHandle | None = None

    def broadcast(self, frame: bytes) -> None:
        for seat in self.seats:
            seat.transport.write(frame)
        counts["sent"] += len(self.seats)

    def reveal(self) -> None:
        loop = asyncio.get_running_loop()
        self.timer = loop.call_later(2.0, self.reveal)
        self.turn += 1
        swatter = self.turn % 4 == 0
        self.broadcast(text_frame(orjson.dumps({"type": "reveal", "turn": self.turn,
                                                "swatter": swatter})))  # fmt: skip
        if swatter:
            self.open_turn, self.slaps = self.turn, []
            self.closer = loop.call_later(1.0, self.close)

    def slap(self, seat: int, turn: int) -> None:
        if self.open_turn and turn == self.open_turn:
            self.slaps.append(seat)
            if len(self.slaps) == len(self.seats):
                self.close()

    def close(self) -> None:
        if not self.open_turn:
            return
        if self.closer is not None:
            self.closer.cancel()
        self.broadcast(text_frame(orjson.dumps({"type": "result", "turn": self.open_turn,
                                                "slaps": self.slaps})))  # fmt: skip
        self.open_turn = 0


filling: list[Room] = []
slots: list[dict[int, Socket]] = [{} for _ in range(10)]
at = [0, 0]  # the next slot to join, the next to ping


class Socket(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: asyncio.Transport = transport  # type: ignore[assignment]
        self.head = b""
        self.reader: Reader | None = None

    def data_received(self, data: bytes) -> None:
        reader = self.reader
        if reader is None:
            self.handshake(data)
            return
        payload = reader.one_text(data)
        messages = [(TEXT, payload)] if payload is not None else reader.feed(data)
        for opcode, body in messages:
            if opcode != TEXT:
                continue
            counts["received"] += 1
            if pong_id(body) is not None:
                continue
            m = orjson.loads(body)
            if m.get("type") == "slap":
                self.room.slap(self.seat, m["turn"])

    def handshake(self, data: bytes) -> None:
        self.head += data
        if b"\r\n\r\n" not in self.head:
            return
        key = next(line.split(b":", 1)[1].strip() for line in self.head.split(b"\r\n")
                   if line.lower().startswith(b"sec-websocket-key:"))  # fmt: skip
        accept = accept_key(key.decode()).encode()
        self.transport.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                             b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept +
                             b"\r\n\r\n")  # fmt: skip
        self.reader = Reader(1 << 16)
        if not filling:
            filling.append(Room())
        self.room = filling[0]
        self.seat = len(self.room.seats)
        self.room.seats.append(self)
        if len(self.room.seats) == 4:
            filling.clear()
            self.room.timer = asyncio.get_running_loop().call_later(2.0, self.room.reveal)
        slots[at[0]][id(self)] = self
        at[0] = (at[0] + 1) % len(slots)

    def connection_lost(self, exc: Exception | None) -> None:
        for slot in slots:
            slot.pop(id(self), None)
        if self.reader is not None and self.room.timer is not None:
            self.room.timer.cancel()


def ping() -> None:
    loop = asyncio.get_running_loop()
    loop.call_later(0.1, ping)
    slot = slots[at[1]]
    at[1] = (at[1] + 1) % len(slots)
    for sock, ping_id in zip(list(slot.values()), ping_ids(len(slot)), strict=True):
        sock.transport.write(text_frame(b'{"type":"ping","id":%d}' % ping_id))
    counts["sent"] += len(slot)


async def main(port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Socket, "127.0.0.1", port, backlog=4096)
    loop.call_later(0.1, ping)
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    print("listening", flush=True)
    while await reader.readline():
        print(orjson.dumps(counts).decode(), flush=True)
    server.close()


if __name__ == "__main__":
    uvloop.run(main(int(sys.argv[1])))
