"""The HTTP side's small common pieces: a request's body read into a protocol model, a
seat's reply, and the one answer to a refused request.

Every route raises :class:`~flyswat.errors.FlyswatError` to refuse a request, having changed
nothing; the application's exception handler (:func:`refused`) answers it with the status
of its code in :data:`flyswat.errors.CODES` and ``{"error", "message"}`` (``docs/PROTOCOL.md``).
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from flyswat import protocol as p
from flyswat.errors import FlyswatError, MalformedError
from flyswat.server.transport import error_body, read_body
from flyswat.table.core import Table

M = TypeVar("M", bound=BaseModel)


async def refused(_: Request, e: Exception) -> JSONResponse:
    """The application's handler of :class:`FlyswatError`: the refusal as its client reads it
    (a ``503``, whatever its code, says when to try again: in a second)."""
    assert isinstance(e, FlyswatError)
    again = {"retry-after": "1"} if e.status == 503 else None
    return JSONResponse(error_body(e.code, e.message), status_code=e.status, headers=again)


async def body(request: Request, model: type[M]) -> M:
    """The request's body as ``model`` (streamed, refused past the protocol's size cap)."""
    return parse(await read_body(request, p.MAX_MESSAGE_BYTES), model)


def parse(raw: bytes, model: type[M]) -> M:
    """``raw`` (JSON, empty for ``{}``) as ``model``; its first fault as ``malformed``."""
    try:
        return model.model_validate_json(raw or b"{}")
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "body"
        raise MalformedError(f"{where}: {first['msg']}") from None


def seated(table: Table, seat: int, token: str) -> JSONResponse:
    """The reply to a seat taken (create, join, Play now, a challenge): ``201``."""
    code = table.code
    reply = p.Seated(code=code, seat=seat, token=token, host=seat == table.host,
                     ws_url=f"/ws/{code}", table_url=f"/?table={code}")  # fmt: skip
    return JSONResponse(reply.model_dump(), status_code=201)
