"""A TCP proxy on loopback that delays each direction, to give a client a round-trip time.

Linux netem is not available on these machines, so latency is injected in process: every chunk
read from one side is written to the other ``delay`` seconds later, plus a jitter drawn per
chunk, never reordering (TCP delivers in order, so a chunk is never sent before the previous
one). The round-trip time a client sees is about ``2 * one_way_ms``.

Since the proxy *is* the network here, it can also play a trusted front honestly: with
``rtt_header`` it sets ``X-Flyswat-Rtt-Us`` on the HTTP request that opens each connection to
the round trip it imposes (``2 * one_way_ms``, as a reverse proxy passes its smoothed TCP
round trip), replacing any such header the client sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from dataclasses import dataclass, field

RTT_HEADER = b"x-flyswat-rtt-us"


@dataclass
class DelayProxy:
    """Listen on ``127.0.0.1:listen_port`` (0 = any free port) and forward to ``target``.

    ``one_way_ms`` is added in each direction, with a jitter uniform in ``±jitter_ms``.
    ``rtt_header``: set ``X-Flyswat-Rtt-Us`` on each connection's first request (a trusted
    front). Use as ``async with DelayProxy(...) as proxy: ... proxy.port``.
    """

    target_host: str
    target_port: int
    one_way_ms: float
    jitter_ms: float = 0.0
    seed: int = 0
    listen_port: int = 0
    rtt_header: bool = False
    port: int = field(init=False, default=0)
    _server: asyncio.Server | None = field(init=False, default=None)
    _tasks: set[asyncio.Task[None]] = field(init=False, default_factory=set)

    async def __aenter__(self) -> DelayProxy:
        self._rng = random.Random(self.seed)
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.listen_port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task

    def _delay(self) -> float:
        jitter = self._rng.uniform(-self.jitter_ms, self.jitter_ms) if self.jitter_ms else 0.0
        return max(0.0, self.one_way_ms + jitter) / 1000

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.target_host, self.target_port)
        except OSError:
            writer.close()
            return
        head = b""
        if self.rtt_header:
            try:
                head = self._with_header(await reader.readuntil(b"\r\n\r\n"))
            except asyncio.IncompleteReadError as e:
                head = e.partial
            except asyncio.LimitOverrunError:
                pass  # a head too long to be a request: passed on untouched
        for src, dst, first in ((reader, up_writer, head), (up_reader, writer, b"")):
            task = asyncio.create_task(self._pump(src, dst, first))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _with_header(self, head: bytes) -> bytes:
        """``head`` (a request line and headers) with our round-trip header in place of any
        the client sent."""
        if not head.endswith(b"\r\n\r\n"):
            return head
        lines = head[:-4].split(b"\r\n")
        kept = [h for h in lines[1:] if h.split(b":", 1)[0].strip().lower() != RTT_HEADER]
        rtt_us = b"%d" % round(2 * self.one_way_ms * 1000)
        return b"\r\n".join([lines[0], *kept, RTT_HEADER + b": " + rtt_us]) + b"\r\n\r\n"

    async def _pump(
        self, src: asyncio.StreamReader, dst: asyncio.StreamWriter, first: bytes = b""
    ) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, chunk = await queue.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not chunk:
                    dst.close()
                    return
                dst.write(chunk)
                await dst.drain()

        sender = asyncio.create_task(deliver())
        last_due = 0.0
        if first:
            last_due = loop.time() + self._delay()
            queue.put_nowait((last_due, first))
        try:
            while True:
                chunk = await src.read(65536)
                last_due = max(last_due, loop.time() + self._delay())
                queue.put_nowait((last_due, chunk))
                if not chunk:
                    break
            await sender
        except (ConnectionError, asyncio.CancelledError):
            sender.cancel()
            dst.close()
