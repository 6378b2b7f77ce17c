"""Ratings: openskill's Plackett–Luce model over a finished game's places.

A game is rated for every seat held by a player with an identity who was not flagged for
too-fast slaps in it and takes part (:func:`out_of_rating`: the game is long enough, the
player did something in it, and is not under fair-play review); the places are the ranks,
shared places (R24) are ties. Bots take part
with the fixed rating of their level (:data:`BOT_RATINGS`), so a game against bots counts,
and are never changed. Flagged players and seats without an identity take no part at all.
A game with no one to rate, or fewer than two taking part, changes nothing.

Bot accounts (programs under their owner's identity, ``Entry.bot``) are a pool of their own:
at a table that takes bot accounts (``Entry.mixed``: everyone there chose it) a game is rated
as one field; elsewhere (a bot account a host invited) the people are rated among themselves
and the bot accounts among themselves, each field with the house bots, so that a person's
rating moves against a program only where the person chose such a table.

Ratings are shown as ``round(40 * mu)`` (:func:`shown`): 1000 for a new player, whose ``mu``
is openskill's default 25; the leaderboard orders players by the conservative
``mu - 3 sigma`` (:func:`ordinal`), so a few lucky games do not top it. A rating whose
``sigma`` is still above :data:`PROVISIONAL_SIGMA` is shown as provisional (:func:`provisional`).

:func:`rate_game` is a pure function of the ratings before and the game; folding it over
games in the order they ended (:func:`replay`) gives the ratings the store keeps, game by
game (a property test holds the two to each other).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

#: openskill's defaults: a new player's mu and sigma.
MU, SIGMA = 25.0, 25.0 / 3
#: Shown rating points per unit of mu.
SCALE = 40
#: A rating is provisional while its sigma is above this: about a player's first six games
#: at a table of four (a new player's sigma is 8.33; each game takes some 0.3 to 0.5 off).
PROVISIONAL_SIGMA = 6.0


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's skill estimate: ``mu`` and its uncertainty ``sigma``."""

    mu: float = MU
    sigma: float = SIGMA

    @property
    def shown(self) -> int:
        """The rating shown to players (:func:`shown`)."""
        return shown(self.mu)

    @property
    def provisional(self) -> bool:
        """Whether the estimate is still unsure (:func:`provisional`)."""
        return provisional(self.sigma)

    @property
    def ordinal(self) -> float:
        """The conservative estimate the leaderboard orders by."""
        return ordinal(self.mu, self.sigma)


def shown(mu: float) -> int:
    """The rating shown for ``mu``: 1000 for a new player."""
    return round(SCALE * mu)


def provisional(sigma: float) -> bool:
    """Whether a rating of uncertainty ``sigma`` is shown as provisional (the first games)."""
    return sigma > PROVISIONAL_SIGMA


def ordinal(mu: float, sigma: float) -> float:
    """``mu - 3 sigma``: what the leaderboard orders by."""
    return mu - 3 * sigma


#: The bots' fixed ratings per level, calibrated with ``python -m flyswat.sim.calibrate
#: --games 20000`` (docs/PLAYERS.md): normal is pinned at a new player's 25.
BOT_RATINGS: dict[str, Rating] = {
    "easy": Rating(3.5, 1.0),
    "normal": Rating(25.0, 1.0),
    "hard": Rating(60.5, 1.0),
}


@dataclass(frozen=True, slots=True)
class Entry:
    """One seat of a finished game, as rating sees it: its ``place`` (1 = first), and either
    a ``player`` id (a human with an identity) or a bot ``level``; ``flagged`` when the seat
    had slaps refused as too fast in the game. ``bot``: the player is a bot account;
    ``mixed``: the game's table took bot accounts (the same for every entry of a game)."""

    seat: int
    place: int
    player: str | None = None
    level: str | None = None
    flagged: bool = False
    bot: bool = False
    mixed: bool = False
    #: Why a player's seat takes no part though not flagged (:data:`OUT`); None: it does.
    out: str | None = None

    def to_json(self) -> dict[str, Any]:
        """This entry as stored (``bot``, ``mixed`` and ``out`` only when set: older rows
        read the same)."""
        out: dict[str, Any] = {"seat": self.seat, "place": self.place, "player": self.player,
                               "level": self.level, "flagged": self.flagged}  # fmt: skip
        out.update({k: True for k in ("bot", "mixed") if getattr(self, k)})
        if self.out is not None:
            out["out"] = self.out
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Entry:
        """The entry :meth:`to_json` wrote."""
        return cls(int(data["seat"]), int(data["place"]), data.get("player"),
                   data.get("level"), bool(data.get("flagged", False)),
                   bool(data.get("bot", False)), bool(data.get("mixed", False)),
                   data.get("out"))  # fmt: skip


def pools(entries: Sequence[Entry]) -> list[list[Entry]]:
    """The fields a game is rated in: all its entries, unless it has bot accounts at a table
    that did not take them; then the people's field (bot accounts take no part) and the bot
    accounts' field (people take no part), the house bots in both."""
    if not any(e.bot for e in entries) or all(e.mixed for e in entries):
        return [list(entries)]

    def without(program: bool) -> list[Entry]:
        return [e if e.player is None or e.bot != program
                else Entry(e.seat, e.place) for e in entries]  # fmt: skip

    return [without(True), without(False)]


#: A rated game is at least this many reveals long (a quarter of the deck: ``remove`` at
#: most 84): shorter ones end in ties at 0 points too often for a place to say anything.
MIN_REVEALS = 28

#: Why a player's seat takes no part in rating (docs/PLAYERS.md, *What a rated game is*).
OUT = {
    "short": f"the game was shorter than {MIN_REVEALS} reveals",
    "idle": "the player neither slapped nor revealed (the turn timer revealed for them)",
    "review": "the player is under fair-play review",
}


def out_of_rating(record: Mapping[str, Any], seat: int, own_reveals: int | None) -> str | None:
    """Why the player at ``seat`` takes no part in rating game ``record`` (a key of
    :data:`OUT`), or None if they do: the game had at least :data:`MIN_REVEALS` reveals, and
    the player took part themself — at least one slap of theirs was accepted, or they
    revealed at least once (``own_reveals``: their reveals not made by the turn timer; None
    when unknown, as for games stored before it was kept, taken as taking part)."""
    turns = record.get("turns", [])
    if len(turns) < MIN_REVEALS:
        return "short"
    slapped = any(
        int(s["seat"]) == seat for t in turns for s in (t.get("round") or {}).get("slaps", [])
    )
    if not slapped and own_reveals is not None and own_reveals == 0:
        return "idle"
    return None


def rated_players(entries: Sequence[Entry]) -> list[str]:
    """The players whose rating the game changes (none when it is not rated)."""
    players = [
        e.player for e in entries if e.player is not None and not e.flagged and e.out is None
    ]
    taking_part = len(players) + sum(1 for e in entries if e.level in BOT_RATINGS)
    return players if players and taking_part >= 2 and len(set(players)) == len(players) else []


@cache
def _model() -> Any:
    from openskill.models import PlackettLuce

    return PlackettLuce()


def rate_game(before: Mapping[str, Rating], entries: Sequence[Entry]) -> dict[str, Rating]:
    """The new ratings of the players the game rates (:func:`rated_players` of each of its
    :func:`pools`), from their ratings ``before`` (a player missing from it is new). Bots
    are fixed; flagged players and seats without an identity take no part."""
    out: dict[str, Rating] = {}
    for field in pools(entries):
        out.update(_rate_field(before, field))
    return out


def rated_in_pools(entries: Sequence[Entry]) -> list[str]:
    """The players whose rating the game changes, over its pools."""
    return [pid for field in pools(entries) for pid in rated_players(field)]


def _rate_field(before: Mapping[str, Rating], entries: Sequence[Entry]) -> dict[str, Rating]:
    players = set(rated_players(entries))
    if not players:
        return {}
    model = _model()
    field = [
        e for e in entries if e.player in players or (e.player is None and e.level in BOT_RATINGS)
    ]
    teams = []
    for e in field:
        r = before.get(e.player, Rating()) if e.player is not None else BOT_RATINGS[str(e.level)]
        teams.append([model.rating(mu=r.mu, sigma=r.sigma)])
    rated = model.rate(teams, ranks=[float(e.place) for e in field])
    return {e.player: Rating(t[0].mu, t[0].sigma) for e, t in zip(field, rated, strict=True)
            if e.player is not None}  # fmt: skip


def replay(games: Iterable[Sequence[Entry]]) -> dict[str, Rating]:
    """Every player's rating after ``games``, rated one after another from scratch."""
    ratings: dict[str, Rating] = {}
    for entries in games:
        ratings.update(rate_game(ratings, entries))
    return ratings
