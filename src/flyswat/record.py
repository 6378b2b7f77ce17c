"""Game records (``docs/RECORD.md``, formats ``flyswat-record/1`` and ``/2``): write, read,
verify. Format 2 is format 1 plus ``rules.min_reaction_ms``, the human floor the game was
played with: every slap's ``ms`` must be at least that (``docs/RECORD-2.md``).

A record is event-sourced: the deal and the ordered slaps are the facts, and everything else
follows from them by the rules. :func:`verify_record` recomputes a record from its facts with
the engine and reports every field that disagrees; ``flyswat verify`` runs it over files.

Beyond docs/RECORD.md, a record may carry ``"commitment"``: the SHA-256 of the seed that the
server published before the game (provably fair shuffle, :mod:`flyswat.shuffle`). When a
record has a seed, its deal must follow from that seed; when it has a commitment, the
commitment must match the seed.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from flyswat.cards import Card, colour_letters
from flyswat.engine import Game, Slap, deal
from flyswat.errors import FlyswatError, MalformedError
from flyswat.rules import Rules
from flyswat.shuffle import commitment

FORMAT = "flyswat-record/1"
#: Format 1 plus ``rules.min_reaction_ms`` (the floor every slap's ``ms`` is checked against).
FORMAT_2 = "flyswat-record/2"


# -- the shape, as pydantic models (structure only: the rules are checked by replay) --------


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class SeatModel(_Model):
    name: str
    kind: Literal["human", "bot"]
    level: str | None = None


class SlapModel(_Model):
    seat: int
    card: str
    ms: int | float | None = None


class PairModel(_Model):
    seat: int
    card: str


class RoundModel(_Model):
    allowed: list[str]
    slaps: list[SlapModel]
    won: list[PairModel]
    penalties: list[PairModel]


class TurnModel(_Model):
    seat: int
    card: str
    round: RoundModel | None = None


class RulesModel(_Model):
    seats: int
    hands: int
    remove: int
    slap_window_ms: int
    min_reaction_ms: int | None = None


class ResultModel(_Model):
    points: list[int]
    flies: list[int]
    places: list[int]


class RecordModel(_Model):
    format: Literal["flyswat-record/1", "flyswat-record/2"]
    id: str
    started_at: str
    rules: RulesModel
    seats: list[SeatModel]
    seed: int | str | None
    removed: list[str]
    start: int
    deal: list[list[str]]
    turns: list[TurnModel]
    result: ResultModel
    commitment: str | None = Field(default=None)


# -- writing ---------------------------------------------------------------------------------


def _pairs(pairs: Sequence[tuple[int, Card]]) -> list[dict[str, Any]]:
    return [{"seat": seat, "card": card.text} for seat, card in pairs]


def to_record(
    game: Game,
    seats: Sequence[dict[str, Any]],
    *,
    id: str,
    started_at: str,
    with_commitment: bool = False,
    min_reaction_ms: int | None = None,
) -> dict[str, Any]:
    """The record of a finished ``game``.

    ``seats`` gives each seat's ``name``, ``kind`` and (bots) ``level``. With
    ``with_commitment`` the record also carries the seed's SHA-256. With ``min_reaction_ms``
    (the human floor the game was played with) it is a format 2 record. Reaction times are
    written in whole ms. Raises :class:`~flyswat.errors.IllegalActionError` if the game is
    not over.
    """
    result = game.result()
    if len(seats) != game.rules.seats:
        raise MalformedError(f"{len(seats)} seat entries for {game.rules.seats} seats")
    turns: list[dict[str, Any]] = []
    for t in game.turns:
        turn: dict[str, Any] = {"seat": t.seat, "card": t.card.text}
        if t.round is not None:
            r = t.round
            turn["round"] = {
                "allowed": colour_letters(r.allowed),
                "slaps": [
                    {"seat": s.seat, "card": s.card.text}
                    | ({} if s.ms is None else {"ms": round(s.ms)})
                    for s in r.slaps
                ],
                "won": _pairs(r.won),
                "penalties": _pairs(r.penalties),
            }
        turns.append(turn)
    rules: dict[str, Any] = game.rules.to_json()
    if min_reaction_ms is not None:
        rules["min_reaction_ms"] = min_reaction_ms
    record: dict[str, Any] = {
        "format": FORMAT if min_reaction_ms is None else FORMAT_2,
        "id": id,
        "started_at": started_at,
        "rules": rules,
        "seats": [dict(s) for s in seats],
        "seed": game.seed,
        "removed": [c.text for c in game.removed],
        "start": game.start,
        "deal": [[c.text for c in pile] for pile in game.dealt],
        "turns": turns,
        "result": result.to_json(),
    }
    if with_commitment and game.seed is not None:
        record["commitment"] = commitment(game.seed)
    return record


def record_json(value: Any) -> str:
    """``value`` (a record, or a row the store keeps of one) as compact JSON text, made by
    orjson: a record is 8–16 KB, and the standard library's encoder takes several times as
    long over it, on the thread that stores a game's end."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def write_record(record: dict[str, Any], path: str | Path) -> None:
    """Write ``record`` as JSON to ``path`` (UTF-8, compact but one line per turn is not needed)."""
    Path(path).write_text(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")


def read_record(path: str | Path) -> dict[str, Any]:
    """Read a record's JSON; raises :class:`MalformedError` if the file is not a JSON object."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise MalformedError(f"{path}: not a readable JSON file ({e})") from None
    if not isinstance(data, dict):
        raise MalformedError(f"{path}: a record is a JSON object")
    return data


# -- verifying -------------------------------------------------------------------------------


class Discrepancy(FlyswatError):
    """A record field that its facts do not give back."""

    code = "discrepancy"


def _check(what: str, recorded: object, computed: object) -> None:
    """Raise :class:`Discrepancy` naming the first place where the two values differ."""
    if recorded == computed:
        return
    if isinstance(recorded, list) and isinstance(computed, list):
        for i, (a, b) in enumerate(zip(recorded, computed, strict=False)):
            _check(f"{what}[{i}]", a, b)
        raise Discrepancy(
            f"{what}: the record has {len(recorded)} entries, the rules give {len(computed)}"
        )
    if (
        isinstance(recorded, dict)
        and isinstance(computed, dict)
        and recorded.keys() == computed.keys()
    ):
        for key in computed:
            _check(f"{what}.{key}", recorded[key], computed[key])
    raise Discrepancy(f"{what}: the record says {recorded!r}, the rules give {computed!r}")


def _cards(texts: Sequence[str], where: str) -> list[Card]:
    try:
        return [Card.parse(t) for t in texts]
    except MalformedError as e:
        raise Discrepancy(f"{where}: {e.message}") from None


def replay(record: dict[str, Any], before: Callable[[int, Game], None] | None = None) -> Game:
    """Recompute the game of ``record`` from its facts, checking every other field on the way;
    ``before(i, game)`` is called before turn ``i`` is played, if given.

    Returns the finished game. Raises :class:`Discrepancy` at the first field that disagrees
    (or :class:`MalformedError` for a document that is not a record).
    """
    try:
        rec = RecordModel.model_validate(record)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "record"
        what = f"not a {FORMAT} or {FORMAT_2} record"
        raise MalformedError(f"{what}: {where}: {first['msg']}") from None
    floor = rec.rules.min_reaction_ms
    if (floor is None) != (rec.format == FORMAT):
        need = "must have it" if floor is None else "do not have it"
        raise Discrepancy(f"rules.min_reaction_ms: {rec.format} records {need}")
    try:
        rules = Rules(rec.rules.seats, rec.rules.remove, rec.rules.slap_window_ms)
    except MalformedError as e:
        raise Discrepancy(f"rules: {e.message}") from None
    _check("rules.hands", rec.rules.hands, rules.hands)
    _check("number of seats entries", len(rec.seats), rules.seats)
    removed = _cards(rec.removed, "removed")
    piles = [_cards(p, f"deal[{i}]") for i, p in enumerate(rec.deal)]
    try:
        game = Game(rules, piles, start=rec.start, removed=removed, seed=rec.seed)
    except MalformedError as e:
        raise Discrepancy(f"deal: {e.message}") from None
    if rec.seed is not None:
        want_removed, want_piles = deal(rules, rec.seed, rec.start)
        _check("removed (from the seed)", rec.removed, [c.text for c in want_removed])
        _check("deal (from the seed)", rec.deal, [[c.text for c in p] for p in want_piles])
    if rec.commitment is not None:
        if rec.seed is None:
            raise Discrepancy("commitment: the record has a commitment but no seed")
        _check("commitment", rec.commitment, commitment(rec.seed))
    for i, t in enumerate(rec.turns):
        if before is not None:
            before(i, game)
        _replay_turn(game, i, t, floor)
    if not game.over:
        raise Discrepancy(f"turns: the record ends after {len(rec.turns)} turns, before the game")
    _check("result", rec.result.model_dump(), game.result().to_json())
    return game


def _replay_turn(game: Game, i: int, t: TurnModel, floor: int | None) -> None:
    where = f"turns[{i}]"
    if game.over:
        raise Discrepancy(f"{where}: the game was already over (R22)")
    _check(f"{where}.seat", t.seat, game.to_move)
    _check(f"{where}.card", t.card, game.draw[game.to_move][0].text)
    opens = game.triggers_round(game.draw[game.to_move][0])
    if t.round is not None and not opens:
        raise Discrepancy(f"{where}.round: the record has a round, the rules open none")
    if t.round is None and opens:
        raise Discrepancy(f"{where}.round: missing, the rules open a slap round (R12, R13)")
    if t.round is not None:
        _check(f"{where}.round.allowed", t.round.allowed, colour_letters(game.allowed_colours()))
    recorded = t.round.slaps if t.round is not None else []
    for j, s in enumerate(recorded):
        if floor is not None and s.ms is not None and s.ms < floor:
            raise Discrepancy(
                f"{where}.round.slaps[{j}].ms: {s.ms} ms is under the human floor of {floor} ms"
                " the game was played with"
            )
    slaps = [
        Slap(s.seat, _cards([s.card], f"{where}.round.slaps[{j}]")[0], s.ms)
        for j, s in enumerate(recorded)
    ]
    if slaps and not game.centre:
        raise Discrepancy(f"{where}.round.slaps: the centre was empty (R15)")
    try:
        turn = game.play_turn(slaps)
    except FlyswatError as e:
        raise Discrepancy(f"{where}.round.slaps: {e.message}") from None
    if t.round is None or turn.round is None:
        return
    r = turn.round
    _check(f"{where}.round.won", [p.model_dump() for p in t.round.won], _pairs(r.won))
    _check(
        f"{where}.round.penalties",
        [p.model_dump() for p in t.round.penalties],
        _pairs(r.penalties),
    )


def verify_record(record: dict[str, Any]) -> list[str]:
    """The discrepancies of ``record`` (the first one found), or ``[]`` when it is valid."""
    try:
        replay(record)
    except FlyswatError as e:
        return [e.message]
    return []


# -- the command -----------------------------------------------------------------------------


def record_files(paths: Sequence[str | Path]) -> Iterator[Path]:
    """Every ``*.json`` file named, or found below a named folder, in sorted order."""
    for p in map(Path, paths):
        if p.is_dir():
            yield from sorted(p.rglob("*.json"))
        else:
            yield p


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``flyswat verify``."""
    parser.add_argument("paths", nargs="+", metavar="PATH", help="record files or folders")


def run(args: argparse.Namespace) -> int:
    """Verify every record; print the first discrepancy of each bad one; 1 if any is bad."""
    good = bad = 0
    for path in record_files(args.paths):
        try:
            problems = verify_record(read_record(path))
        except MalformedError as e:
            problems = [e.message]
        if problems:
            bad += 1
            print(f"{path}: INVALID: {problems[0]}")
        else:
            good += 1
    if good + bad == 0:
        print("no records found")
        return 1
    print(f"{good} valid, {bad} invalid")
    return 1 if bad else 0
