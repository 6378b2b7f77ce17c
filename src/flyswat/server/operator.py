"""What an operator sees of fair play: ``flyswat fairplay`` and ``GET /api/operator/fairplay``.

The players the detector flagged (:mod:`flyswat.fairplay`, kept by
:mod:`flyswat.server.fairplay_store`) are listed here and nowhere else: no public answer says
that a player is under review. The HTTP route answers only a request that carries the
operator's secret (``Authorization: Bearer <secret>``), which the operator sets with
``flyswat serve --operator-secret`` or ``FLYSWAT_OPERATOR_SECRET``; without one set, the route
does not exist (404). The command reads the store directly and may clear a player after a
look (``--clear ID``: they are rated again).
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import json
import os
from typing import Any

from sqlalchemy.engine import Engine
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from flyswat.errors import IllegalActionError
from flyswat.server import fairplay_store

#: The environment variable of the operator's secret (``--operator-secret`` wins).
SECRET_ENV = "FLYSWAT_OPERATOR_SECRET"
#: The shortest secret taken: a guessable one would open the list to anyone.
MIN_SECRET = 16


def operator_secret(given: str | None) -> str | None:
    """The operator's secret from the option or the environment; None when neither is set.
    Raises :class:`SystemExit` for one shorter than :data:`MIN_SECRET`."""
    secret = given if given is not None else os.environ.get(SECRET_ENV)
    if not secret:
        return None
    if len(secret) < MIN_SECRET:
        raise SystemExit(
            f"flyswat serve: the operator's secret is at least {MIN_SECRET} characters"
        )
    return secret


def check(request: Request, expected: bytes | None) -> None:
    """Refuse (``bad_secret``) a request without ``expected``, the operator's
    ``Authorization`` header (None: no secret is set, so nobody is the operator)."""
    given = request.headers.get("authorization", "").encode()
    if expected is None or not hmac.compare_digest(given, expected):
        raise IllegalActionError("the operator's secret is needed (Authorization)", "bad_secret")


def routes(engine: Engine, secret: str | None) -> list[Route]:
    """The operator's routes over the store's ``engine``; none when no secret is set."""
    if secret is None:
        return []
    expected = f"Bearer {secret}".encode()

    async def fairplay(request: Request) -> Response:
        check(request, expected)
        everyone = request.query_params.get("all") == "1"

        def listing() -> list[dict[str, Any]]:
            with engine.connect() as conn:
                return fairplay_store.listing(conn, everyone=everyone)

        return JSONResponse({"players": await asyncio.to_thread(listing)})  # SQL off the loop

    return [Route("/api/operator/fairplay", fairplay)]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``flyswat fairplay``."""
    parser.add_argument("--db", default="sqlite:///flyswat.db", help="the server's store")
    parser.add_argument("--all", action="store_true", help="cleared players too")
    parser.add_argument("--json", action="store_true", help="one JSON document")
    parser.add_argument(
        "--clear", metavar="ID", default=None,
        help="an operator looked and found nothing: rate the player again (--clear=ID for "
        "an id that begins with '-')",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """List the players under review (or clear one); the exit status."""
    from flyswat.server.store import Store, now_iso

    store = Store(args.db)
    try:
        if args.clear is not None:
            with store.engine.begin() as conn:
                done = fairplay_store.clear(conn, args.clear, now_iso())
            print(f"{args.clear}: cleared" if done else f"{args.clear}: not listed")
            return 0 if done else 1
        with store.engine.connect() as conn:
            rows = fairplay_store.listing(conn, everyone=args.all)
    finally:
        store.close()
    if args.json:
        print(json.dumps({"players": rows}, indent=2))
    else:
        print(report(rows))
    return 0


def report(rows: list[dict[str, Any]]) -> str:
    """The listing as text for a person: one paragraph per player, highest score first."""
    if not rows:
        return "No player is under review."
    lines = [f"{len(rows)} player(s) listed, highest score first:"]
    for r in rows:
        lines.append(f"- {r['name'] or '?'} ({r['player_id']}): {r['state']}, score "
                     f"{r['score']:.2f} over {r['games']} games, {r['first_hands']} first "
                     f"hands; flagged {r['flagged_at']}")  # fmt: skip
        lines.append(f"  {r['reason']}")
    return "\n".join(lines)
