"""Quick reactions at a table (issue 23): a fixed set of keys, a few at a time per seat,
never while a slap round is open. A function of a table's
:class:`~flyswat.table.context.Context`, as :mod:`~flyswat.table.turns`' are.

A reaction is not part of the game: it changes no state, is never stored (no event, not in
the record) and goes to every connection at once, seats and spectators; a spectator may not
send one (the table's ``spectator`` refusal). A restarted table has forgotten them, which is
what a reaction shown for a few seconds asks.
"""

from __future__ import annotations

from flyswat import protocol as p
from flyswat.errors import IllegalActionError, MalformedError
from flyswat.table.context import Context


def react(t: Context, seat: int, reaction: str, now: float) -> None:
    """Seat ``seat`` reacts at ``now``: told to everyone. Raises ``bad_reaction`` for a key
    not in :data:`~flyswat.protocol.REACTIONS`, ``reaction_in_round`` while a slap round is
    open (nobody is distracted at the moment that counts), ``reaction_limited`` past the
    seat's bucket; a refused reaction takes no token."""
    if reaction not in p.REACTIONS:
        raise MalformedError(f"a reaction is one of {', '.join(p.REACTIONS)}", "bad_reaction")
    if t.game is not None and t.game.round is not None and t.state == "playing":
        raise IllegalActionError("no reactions while a slap round is open", "reaction_in_round")
    if not t.seats[seat].reactions.take(now):
        raise IllegalActionError("too many reactions: wait a little", "reaction_limited")
    told = p.Reacted(seat=seat, reaction=reaction)
    for conn in t.conns:
        t.send(conn, told)
