"""Seats, clients and table codes: the small parts a table is made of.

A :class:`Client` is whatever carries messages to one connection (the WebSocket adapter in
:mod:`.app`, or a list in a unit test). The table never awaits a client: :meth:`Client.send`
queues, so one broadcast is one synchronous step and nobody gets a message first (R10).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from pydantic import BaseModel

from flyswat.arbiter import Link
from flyswat.errors import MalformedError
from flyswat.server.protocol import MAX_NAME

#: Table codes avoid letters and digits that look alike (0/O, 1/I/L).
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6


class Client(Protocol):
    """One connection to a table: a player's (``seat`` set) or a spectator's."""

    seat: int | None

    def send(self, message: BaseModel, on_sent: Callable[[float], None] | None = None) -> None:
        """Queue ``message``; call ``on_sent(t)`` with the clock time it was handed to the
        network. Never blocks, never raises."""
        ...  # pragma: no cover


@dataclass(eq=False)
class Seat:
    """One seat of a table: a human (once joined: name and token hash) or a bot."""

    index: int
    kind: Literal["human", "bot"]
    level: str | None = None
    name: str | None = None
    token_hash: str | None = None
    ready: bool = False
    clients: set[Client] = field(default_factory=set)
    link: Link = field(default_factory=Link)
    too_fast: int = 0

    @property
    def is_bot(self) -> bool:
        """True for a server bot."""
        return self.kind == "bot"

    @property
    def joined(self) -> bool:
        """A bot, or a human who has taken the seat."""
        return self.is_bot or self.token_hash is not None

    @property
    def connected(self) -> bool:
        """A bot, or a human with at least one open connection."""
        return self.is_bot or bool(self.clients)

    def holds(self, token: str) -> bool:
        """Does ``token`` belong to this seat? (Constant-time comparison.)"""
        return self.token_hash is not None and hmac.compare_digest(
            self.token_hash, token_hash(token)
        )

    def record_entry(self) -> dict[str, str]:
        """This seat in a record's ``seats`` list (RECORD.md)."""
        entry = {"name": self.name or f"Seat {self.index}", "kind": self.kind}
        if self.level is not None:
            entry["level"] = self.level
        return entry


def new_token() -> str:
    """A fresh secret seat token."""
    return secrets.token_urlsafe(24)


def token_hash(token: str) -> str:
    """What the store keeps of a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_code() -> str:
    """A fresh table code, e.g. ``K7QX2M``."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def clean_name(name: str) -> str:
    """A display name, trimmed; raises :class:`MalformedError` ``bad_name`` when it is empty,
    too long or holds control characters."""
    cleaned = " ".join(name.split())
    if not 1 <= len(cleaned) <= MAX_NAME or not cleaned.isprintable():
        raise MalformedError(f"a name is 1 to {MAX_NAME} printable characters", "bad_name")
    return cleaned
