"""The small parts a table is made of: seats, connections, names, tokens and codes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections import deque
from dataclasses import dataclass, field
from typing import Literal

from flyswat.arbiter import Link
from flyswat.bucket import TokenBucket

#: Table codes avoid letters and digits that look alike (0/O, 1/I/L).
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6

#: Token bucket of one connection and of one seat: messages per second, and burst.
RATE_PER_S = 20.0
BURST = 40.0
#: A seat's quick reactions: this many at once, then one every REACT_EVERY_MS.
REACT_BURST = 3.0
REACT_EVERY_MS = 2000.0
#: More errors than this within ERROR_WINDOW_MS closes the connection (policy violation).
MAX_ERRORS = 20
ERROR_WINDOW_MS = 10_000.0


def reaction_bucket() -> TokenBucket:
    """A seat's own bucket of quick reactions (:mod:`flyswat.table.reactions`), on the
    table's clock (ms): :data:`REACT_BURST` at once, then one every :data:`REACT_EVERY_MS`."""
    return TokenBucket.fresh(1 / REACT_EVERY_MS, REACT_BURST)


def message_bucket() -> TokenBucket:
    """The token bucket of one connection or one seat, on the table's clock (ms):
    :data:`RATE_PER_S` messages a second, :data:`BURST` at once."""
    return TokenBucket.fresh(RATE_PER_S / 1000, BURST)


@dataclass(eq=False)
class Conn:
    """One connection to a table, after its ``hello``: a seat's, or a spectator's (None)."""

    id: int
    seat: int | None
    bucket: TokenBucket = field(default_factory=message_bucket)
    errors: deque[float] = field(default_factory=deque)

    def erred(self, now: float) -> bool:
        """Count one refused message; True when the connection has now erred too often."""
        self.errors.append(now)
        while self.errors and self.errors[0] < now - ERROR_WINDOW_MS:
            self.errors.popleft()
        return len(self.errors) > MAX_ERRORS


class Audience:
    """The spectators of every table of one node, counted against one cap: a table admits a
    spectator only while the node's count is under it (``docs/PROTOCOL.md``, *Watching*).
    One object shared by the node's tables; a table alone has one of its own."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.count = 0

    def admit(self) -> bool:
        """Count one more spectator; False (and nothing counted) when the node is full."""
        if self.count >= self.cap:
            return False
        self.count += 1
        return True

    def add(self) -> None:
        """Count a connection that watches from now on, cap or not (a player who left)."""
        self.count += 1

    def release(self, n: int = 1) -> None:
        """``n`` spectators are gone."""
        self.count = max(0, self.count - n)


@dataclass(eq=False)
class Seat:
    """One seat of a table: a human (once joined: name and token hash) or a bot.

    A seat has at most one live connection (``conn``): a new ``hello`` takes it over."""

    index: int
    kind: Literal["human", "bot"]
    level: str | None = None
    name: str | None = None
    token_hash: str | None = None
    ready: bool = False
    conn: int | None = None
    link: Link = field(default_factory=Link)  # what the server knows of its network
    bucket: TokenBucket = field(default_factory=message_bucket)
    too_fast: int = 0
    reveals: int = 0  # this game's reveals by the player themself (not by the turn timer)
    away_since: float | None = None  # in the lobby: joined, and no connection since then
    player: str | None = None  # the player's id, when they came with an identity
    rating: int | None = None  # their shown rating when they sat down
    rematch: bool = False  # at the end: accepted another game
    bot_account: bool = False  # its player is a bot account: a program at a human seat
    reactions: TokenBucket = field(default_factory=reaction_bucket)

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
        """A bot, or a human with an open connection."""
        return self.is_bot or self.conn is not None

    def holds(self, token: str) -> bool:
        """Does ``token`` belong to this seat? (Constant-time comparison.)"""
        return self.token_hash is not None and hmac.compare_digest(
            self.token_hash, token_hash(token)
        )

    def record_entry(self) -> dict[str, str]:
        """This seat in a record's ``seats`` list (docs/RECORD.md)."""
        entry = {"name": self.name or f"Seat {self.index}", "kind": self.kind}
        if self.level is not None:
            entry["level"] = self.level
        return entry


def token_hash(token: str) -> str:
    """What the store keeps of a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def seat_token(key: str, code: str) -> str:
    """The seat token of a join at table ``code`` that came with ``key`` (the player's secret,
    or an anonymous join's request key): HMAC-SHA256 of the code under the key, 24 bytes in
    base64url (32 characters, as a random token). The same key and table give the same
    token, so a join sent again gets the token its lost reply carried; the store keeps only
    the token's hash, from which neither the key nor the token can be found."""
    message = b"".join((b"flyswat seat token/", code.encode("utf-8")))  # mypyc: no bytes +
    mac = hmac.new(key.encode("utf-8"), message, "sha256")
    return base64.urlsafe_b64encode(mac.digest()[:24]).decode("ascii")


def new_code() -> str:
    """A fresh table code, e.g. ``K7QX2M``."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
