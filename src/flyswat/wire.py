"""The lean wire of protocol 3: what changed, not the whole view (docs/PROTOCOL.md).

A seat's view (:func:`flyswat.view.view`, R25) is split in two:

- the **public** part, the view of a spectator: the same for everyone at the table, so a
  broadcast encodes it once (:class:`Deltas`);
- the **private** part, ``you``: the seat, its own won cards, its hands laid in an open round
  and whether it said done (:func:`private_of`).

``welcome`` and ``started`` carry a seat's whole view. ``reveal``, ``hands``, ``round`` and
``over`` carry in ``view`` only the public fields that changed since the table's previous
broadcast, and ``you`` only when the receiving seat's private part changed since it was last
sent. A client keeps both and puts the seat's view back together (:class:`Assembler` here,
``web/js/wire.js`` in the browser): the result is exactly the view the seat would have been
sent whole.

Messages are encoded with orjson; a broadcast's shared bytes are made once and a seat's
``you`` appended to them (:meth:`Deltas.message`).
"""

from __future__ import annotations

from typing import Any

import orjson

from flyswat.engine import Game

#: The top-level view fields that differ between seats (the rest is public).
PRIVATE = ("seat", "won")


def encode(message: dict[str, Any]) -> bytes:
    """One server message as its JSON text's UTF-8 bytes."""
    data: bytes = orjson.dumps(message)
    return data


def private_of(game: Game, seat: int) -> dict[str, Any]:
    """The part of ``seat``'s view that only it sees (R25)."""
    r = game.round
    return {
        "seat": seat,
        "won": [c.text for c in game.won[seat]],
        "mine": [c.text for c in r.hands_of(seat)] if r is not None else [],
        "done": r is not None and seat in r.done,
    }


def delta(base: dict[str, Any] | None, now: dict[str, Any]) -> dict[str, Any]:
    """The fields of ``now`` that differ from ``base`` (all of them without a base); a field
    that is the same object as the base's is the same without a look at what it holds (a
    view's steady fields are shared: :func:`flyswat.view.view_json`)."""
    if base is None:
        return dict(now)
    return {k: v for k, v in now.items() if k not in base or (base[k] is not v and base[k] != v)}


class Deltas:
    """A table's record of what its connections were last told, and the messages that tell
    them what changed since."""

    def __init__(self) -> None:
        self.public: dict[str, Any] | None = None  # the last public view broadcast
        self.private: dict[int, dict[str, Any]] = {}  # per seat, the last ``you`` sent

    def reset(self, public: dict[str, Any] | None) -> None:
        """Everyone was just sent a whole view with this public part (``started``)."""
        self.public = public
        self.private.clear()

    def pending(self, public: dict[str, Any]) -> bool:
        """Has the public view changed since the last broadcast?"""
        return self.public != public

    def message(
        self, head: dict[str, Any], public: dict[str, Any], seats: list[int | None],
        privates: dict[int, dict[str, Any]],
    ) -> list[bytes]:  # fmt: skip
        """The bytes for each receiver in ``seats`` (None: a spectator) of a broadcast whose
        own fields are ``head``: the shared part encoded once, a ``you`` appended for a seat
        whose private part changed (``privates``: each seat's now)."""
        shared = encode({**head, "view": delta(self.public, public)})
        self.public = public
        out: list[bytes] = []
        mine: dict[int, bytes] = {}
        for seat in seats:
            if seat is None:
                out.append(shared)
                continue
            if seat not in mine:
                you = privates[seat]
                if self.private.get(seat) == you:
                    mine[seat] = shared
                else:
                    self.private[seat] = you
                    # joined, not added: mypyc's ``+`` of bytes leaks (server/frames.py)
                    mine[seat] = b"".join((shared[:-1], b',"you":', encode(you), b"}"))
            out.append(mine[seat])
        return out

    def sent_whole(self, seat: int | None, private: dict[str, Any] | None) -> None:
        """``seat`` was just sent its whole view (``welcome``)."""
        if seat is not None and private is not None:
            self.private[seat] = private


def assemble(public: dict[str, Any], you: dict[str, Any] | None) -> dict[str, Any]:
    """A seat's whole view from the public part and its ``you`` (None: a spectator's)."""
    if you is None:
        return public
    view = {**public, "seat": you["seat"], "won": you["won"]}
    if public.get("round") is not None:
        view["round"] = {**public["round"], "mine": you["mine"], "done": you["done"]}
    return view


def split(view: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A whole view (as ``welcome`` sends it) as its public part and ``you``."""
    if view.get("seat") is None:
        return view, None
    r = view.get("round")
    you = {"seat": view["seat"], "won": view["won"],
           "mine": r["mine"] if r else [], "done": bool(r and r["done"])}  # fmt: skip
    return view, you


class Assembler:
    """A client's side of the lean wire: feed it each message, get it back with ``view``
    replaced by the receiving seat's whole view and ``you`` taken into it — the message as
    it would be were the whole view sent (the Python twin of ``web/js/wire.js``)."""

    def __init__(self) -> None:
        self.public: dict[str, Any] | None = None
        self.you: dict[str, Any] | None = None

    def feed(self, msg: dict[str, Any]) -> dict[str, Any]:
        """``msg`` with its whole ``view`` (messages without one come back as they are)."""
        kind, view = msg.get("type"), msg.get("view")
        if kind in ("welcome", "started"):
            if view is None:
                self.public, self.you = None, None
                return msg
            self.public, self.you = split(view)
            return msg
        if view is None or self.public is None:
            return msg
        self.public = {**self.public, **view}
        out = dict(msg)
        if "you" in out:
            self.you = out.pop("you")
        out["view"] = assemble(self.public, self.you)
        return out
