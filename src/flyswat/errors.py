"""The exception types of flyswat and the registry of error codes, all in one place.

::

    FlyswatError (Exception)
    ├── MalformedError (ValueError)        input that can never be valid: "R9-1", seats=12,
    │                                      a record that is not a record
    └── IllegalActionError (FlyswatError)  well-formed, but not allowed now: a slap with no
                                           round open, a third hand, a card not in the centre

Each carries a short machine-readable ``code`` that the server passes on in its
``{"type": "error", "code": ..., "message": ...}`` message. A failed action changes nothing.

:data:`CODES` is the one list of codes: each with its kind, the HTTP status it is answered
with, and whether a client can ever receive it (``wire``). ``docs/PROTOCOL.md``'s error table
is generated from it and every language of the browser client has words for each wire code
(both are checked by tests); raising an error with a code not listed here is a bug that the
constructor refuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class ErrorCode:
    """One error code: ``kind`` (malformed input, or an action not allowed now), the HTTP
    ``status`` it is answered with, ``wire`` (a client may receive it) and what it means."""

    code: str
    kind: Literal["malformed", "illegal"]
    status: int
    wire: bool
    meaning: str


def _codes(
    *rows: tuple[str, Literal["malformed", "illegal"], int, bool, str],
) -> dict[str, ErrorCode]:
    return {row[0]: ErrorCode(*row) for row in rows}


_M: Literal["malformed"] = "malformed"
_I: Literal["illegal"] = "illegal"

#: Every error code flyswat raises, by code.
CODES: dict[str, ErrorCode] = _codes(
    # -- any input ---------------------------------------------------------------------
    ("error", _I, 409, False, "an error with no more specific code"),
    ("malformed", _M, 400, True, "the request or message is not what the protocol says"),
    ("illegal", _I, 409, False, "not allowed now, with no more specific code"),
    ("too_big", _M, 413, True, "a message or request body over the size limit"),
    ("unknown_type", _M, 400, True, "a message type the protocol does not have"),
    ("rate_limited", _I, 429, True, "too many messages or requests: slow down"),
    ("busy", _I, 503, True, "the server is at a limit (connections, new tables): try again"),
    ("moved", _I, 503, True, "the table is being handed to another node: try again"),
    # -- connection --------------------------------------------------------------------
    ("hello_first", _I, 409, True, "a message before hello"),
    ("already_hello", _I, 409, True, "a second hello on one connection"),
    ("hello_timeout", _I, 408, True, "no hello in time: the connection is closed"),
    ("bad_token", _I, 403, True, "no seat at this table has that token"),
    ("replaced", _I, 409, True, "the seat was opened on another connection"),
    ("too_slow", _I, 409, True, "the connection fell too far behind and is closed"),
    ("no_pong", _I, 408, True, "pings went unanswered: the connection is closed"),
    ("spectator", _I, 403, True, "spectators watch; they cannot act"),
    ("not_your_seat", _I, 403, True, "a message about another seat"),
    ("spectators_full", _I, 409, True, "the server has as many spectators as it takes"),
    # -- tables and the lobby ----------------------------------------------------------
    ("not_found", _I, 404, True, "no table with that code"),
    ("bad_options", _M, 400, True, "table options that cannot go together"),
    ("bad_level", _M, 400, True, "a bot level that does not exist"),
    ("bad_name", _M, 400, True, "a name that is empty, too long or not printable"),
    ("bad_rules", _M, 400, True, "rule options out of range"),
    ("too_many_tables", _I, 429, True, "this address has created too many tables lately"),
    ("table_full", _I, 409, True, "every seat is taken"),
    ("already_started", _I, 409, True, "the game has already started"),
    ("not_host", _I, 403, True, "only the host may do that"),
    ("not_full", _I, 409, True, "every seat must be taken first"),
    ("not_ready", _I, 409, True, "not every player is ready"),
    ("not_alone", _I, 409, True, "another player is at this Play now table: it starts when full"),
    ("expired", _I, 410, True, "the lobby was left unused and has closed"),
    ("kicked", _I, 409, True, "the host removed you from the lobby"),
    (
        "not_absent",
        _I,
        409,
        True,
        "the seat's player is here: only an absent player's seat goes to a bot",
    ),
    # -- players -----------------------------------------------------------------------
    ("no_player", _I, 404, True, "no player with that id"),
    ("name_taken", _I, 409, True, "every tagged form of that name is taken: choose another"),
    ("bad_secret", _I, 403, True, "that is not this player's secret"),
    ("bad_claim", _I, 403, True, "no identity has that claim code, or it is spent"),
    (
        "bots_not_allowed",
        _I,
        403,
        True,
        "a bot account where the table takes none and its host invited none",
    ),
    ("not_a_person", _I, 403, True, "a bot account cannot register bot accounts"),
    ("too_many_bots", _I, 409, True, "the owner has as many bot accounts as one may"),
    # -- play --------------------------------------------------------------------------
    ("not_started", _I, 409, True, "the game has not started"),
    ("game_over", _I, 409, True, "the game is over"),
    ("not_over", _I, 409, True, "the game is not over yet"),
    ("not_your_turn", _I, 409, True, "it is another seat's turn to reveal"),
    ("round_open", _I, 409, True, "a slap round is still open"),
    ("no_round", _I, 409, True, "no slap round is open"),
    ("stale_round", _I, 409, True, "the slap is for a round that is not open"),
    ("bad_card", _M, 400, True, "not a card"),
    ("bad_colour", _M, 400, False, "not a colour letter"),
    ("bad_seat", _M, 400, True, "not a seat of the table"),
    ("bad_ms", _M, 400, True, "a reaction time that is not a number of ms"),
    ("not_in_centre", _I, 409, True, "the card is not in the centre"),
    ("same_card", _I, 409, True, "a second hand of one seat on one card (R16)"),
    ("no_hands_left", _I, 409, True, "all the seat's hands are laid (R16)"),
    ("done", _I, 409, True, "the seat said it is done this round, or was away from it (R21)"),
    ("not_away", _I, 409, False, "a seat back in a round it had not dropped out of (a replay)"),
    ("too_fast", _I, 409, True, "faster than a human can react: refused"),
    ("too_late", _I, 409, True, "after the slap window (R21)"),
    # -- around the table: reactions, challenges -------------------------------------
    ("bad_reaction", _M, 400, True, "a reaction that is not one of the fixed set"),
    ("reaction_in_round", _I, 409, True, "no reactions while a slap round is open"),
    ("reaction_limited", _I, 429, True, "too many reactions from this seat: wait a little"),
    ("cannot_challenge", _I, 409, True, "that player cannot be challenged: yourself or a bot"),
    ("too_many_challenges", _I, 429, True, "you have as many open challenges as one may"),
    ("no_challenge", _I, 404, True, "no open challenge with that id for you"),
    ("seat_reserved", _I, 403, True, "the table's free seat is kept for the player challenged"),
    # -- arenas ------------------------------------------------------------------------
    ("no_arena", _I, 404, True, "no arena with that id"),
    ("arena_over", _I, 409, True, "the arena has ended: nobody joins it any more"),
    ("not_in_arena", _I, 409, True, "you have not joined this arena"),
    ("too_many_arenas", _I, 429, True, "as many arenas are not yet ended as may be"),
    # -- records, simulation and environments (never sent by the server) ---------------
    ("bad_deal", _M, 400, False, "a deal that does not hold each card once"),
    ("bad_seed", _M, 400, False, "a seed that is neither a string nor an integer"),
    ("bad_games", _M, 400, False, "a number of games below 0"),
    ("bad_count", _M, 400, False, "a count of jobs or games out of range"),
    ("bad_jobs", _M, 400, False, "a number of jobs below 1"),
    ("not_traced", _M, 400, False, "records asked of a simulation run without traces"),
    ("trace_cut", _M, 400, False, "a simulated game has more slaps than its trace holds"),
    ("bad_render_mode", _M, 400, False, "a render mode the environment does not have"),
    ("no_game", _M, 400, False, "an environment step with no game going"),
    ("bad_record", _M, 400, False, "a record that is not a record of this format"),
    ("discrepancy", _M, 400, False, "a record field that its facts do not give back"),
    ("missing_extra", _I, 409, False, "a command needs an optional extra that is not installed"),
)


class FlyswatError(Exception):
    """Base class of every error flyswat raises on purpose."""

    code = "error"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            if code not in CODES:
                raise KeyError(f"error code {code!r} is not in flyswat.errors.CODES")
            self.code = code

    @property
    def message(self) -> str:
        """The human-readable explanation."""
        return str(self.args[0]) if self.args else ""

    @property
    def status(self) -> int:
        """The HTTP status this error is answered with."""
        return CODES[self.code].status


class MalformedError(FlyswatError, ValueError):
    """Input that is malformed whatever the state of the game."""

    code = "malformed"


class IllegalActionError(FlyswatError):
    """A well-formed action that the rules do not allow at this moment."""

    code = "illegal"


#: Refusals that a fair client on a slow link meets as a matter of course: its slap, done or
#: reveal crossed the table's own move on the wire (the round closed, the turn timed out and
#: the card was revealed for it; a reaction was sent as a reveal opened a round). Each is
#: answered; none counts toward closing the connection for erring (the token bucket still
#: bounds how many a client can send).
LATE: frozenset[str] = frozenset(
    {"stale_round", "too_late", "no_round", "round_open", "not_your_turn", "reaction_in_round"}
)


def wire_codes() -> list[str]:
    """Every code a client may receive, in registry order."""
    return [c.code for c in CODES.values() if c.wire]


def markdown_table() -> str:
    """The error table of ``docs/PROTOCOL.md``: every code a client may receive."""
    rows = ["| code | kind | HTTP | meaning |", "| --- | --- | --- | --- |"]
    rows += [
        f"| `{c.code}` | {c.kind} | {c.status} | {c.meaning} |" for c in CODES.values() if c.wire
    ]
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(markdown_table(), end="")
