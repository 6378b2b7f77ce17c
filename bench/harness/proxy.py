"""A TCP proxy on loopback that delays each direction, to give a client a round-trip time.

Linux netem is not available on these machines, so latency is injected in process: every chunk
read from one side is written to the other ``delay`` seconds later, plus a jitter drawn per
chunk, never reordering (TCP delivers in order, so a chunk is never sent before the previous
one). The round-trip time a client sees is about ``2 * one_way_ms``.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from dataclasses import dataclass, field


@dataclass
class DelayProxy:
    """Listen on ``127.0.0.1:listen_port`` (0 = any free port) and forward to ``target``.

    ``one_way_ms`` is added in each direction, with a jitter uniform in ``±jitter_ms``.
    Use as ``async with DelayProxy(...) as proxy: ... proxy.port``.
    """

    target_host: str
    target_port: int
    one_way_ms: float
    jitter_ms: float = 0.0
    seed: int = 0
    listen_port: int = 0
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
        for src, dst in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pump(src, dst))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pump(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
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
