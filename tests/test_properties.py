"""Invariants over many random games (hypothesis): seeds, 2–8 seats, removed cards, start
seats and random slap sequences, legal and not.

Each game is checked after every action against an independent reading of the rules: where
every card is (R1, R3), what opens a round (R12, R13), the allowed colours (R14), how a round
resolves (R18–R20), when the game ends (R22) and what each seat may see (R8, R25).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import struct
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from flyswat import (
    DECK,
    Card,
    FlyswatError,
    Game,
    IllegalActionError,
    MalformedError,
    Rules,
    view,
)
from flyswat.rules import allowed
from flyswat.shuffle import Seed, shuffled

Snapshot = Callable[[Game], Any]

seeds = st.one_of(st.integers(), st.text(max_size=20))


@st.composite
def tables(draw: st.DrawFn) -> tuple[Rules, Seed, int, int]:
    """Rules, a shuffle seed, a start seat and the seed of the random slappers."""
    seats = draw(st.integers(2, 8))
    remove = draw(st.one_of(st.just(0), st.integers(0, 112 - seats)))
    start = draw(st.integers(0, seats - 1))
    return Rules(seats=seats, remove=remove), draw(seeds), start, draw(st.integers(0, 2**32))


# -- an independent reading of the rules ---------------------------------------------------


def opens_round(centre: list[Card], card: Card) -> bool:
    """R12, R13."""
    colours = {c.colour for c in centre}
    return card.colour is None or (len(colours) == 4 and card.colour not in colours)


def resolve(game: Game) -> tuple[list[list[Card]], list[list[Card]], list[Card]]:
    """R17–R20: the won piles, draw piles and centre after the open round closes. Hands
    stack by reaction time, ties by arrival (every slap here has a time)."""
    r = game.round
    assert r is not None
    won = [list(p) for p in game.won]
    draw = [list(p) for p in game.draw]
    centre = list(game.centre)
    taken: set[Card] = set()
    stacked = [s for _, _, s in sorted((s.ms, i, s) for i, s in enumerate(r.slaps))]
    for s in stacked:
        if s.card.colour in r.allowed and s.card not in taken:
            taken.add(s.card)
            won[s.seat].append(s.card)
            centre.remove(s.card)
    for s in stacked:
        if s.card.colour not in r.allowed and won[s.seat]:
            draw[s.seat].append(won[s.seat].pop())
    return won, draw, centre


def cards_named(data: Any) -> set[Card]:
    """Every card named anywhere in a JSON-ready value."""
    if isinstance(data, str):
        try:
            return {Card.parse(data)}
        except MalformedError:
            return set()
    if isinstance(data, dict):
        data = list(data.values())
    if isinstance(data, list):
        return set().union(*(cards_named(x) for x in data))
    return set()


# -- the checks ------------------------------------------------------------------------------


def check_places(game: Game) -> None:
    """R1, R3: all 112 cards, each in exactly one place, the removed ones in the box."""
    held = (
        sum(len(p) for p in game.draw)
        + sum(len(p) for p in game.won)
        + len(game.centre)
        + len(game.box)
        + (game.round is not None)
    )
    places = game.where()
    assert held == 112
    assert set(places) == set(DECK)
    assert all(places[c] == "box" for c in game.removed)
    assert all(c.is_fly for c in game.centre)
    assert len({c.colour for c in game.centre}) <= 4  # R13
    assert all(c.is_fly for p in game.won for c in p)


def check_hands(game: Game) -> None:
    """R16: at most ``hands`` hands per seat, never two on one card, only on centre flies."""
    r = game.round
    if r is None:
        return
    for seat in range(game.rules.seats):
        mine = r.hands_of(seat)
        assert len(mine) <= game.rules.hands
        assert len(set(mine)) == len(mine)
    assert all(s.card in game.centre for s in r.slaps)


def check_views(game: Game) -> None:
    """R8, R25: while the game runs, no view shows a card of a draw pile, a removed card or
    another seat's won pile; everything is shown at the end.

    One exception, by design: the last round's penalty cards stay named in its public report
    although they now lie at the bottom of draw piles. They were revealed and won in front of
    everyone, so they are no secret (R25: the table saw every win); nothing never revealed is
    ever shown.
    """
    drawn = {c for p in game.draw for c in p}
    never_revealed = drawn - {t.card for t in game.turns}
    seats: list[int | None] = [None, *range(game.rules.seats)]
    for seat in seats:
        out = json.loads(json.dumps(view(game, seat).to_json()))
        named = cards_named(out)
        if game.over:
            assert named == set(DECK)
            continue
        paid = {Card.parse(p["card"]) for p in (out["last_round"] or {}).get("penalties", [])}
        assert named & drawn <= paid
        assert named.isdisjoint(never_revealed)
        assert named.isdisjoint(game.removed)
        assert out["won"] == ([] if seat is None else [c.text for c in game.won[seat]])
        if out["round"] is not None and game.round is not None:
            assert out["round"]["mine"] == (
                [] if seat is None else [c.text for c in game.round.hands_of(seat)]
            )


def check_all(game: Game) -> None:
    check_places(game)
    check_hands(game)


def play(
    rules: Rules,
    seed: Seed,
    start: int,
    slappers: int,
    state: Snapshot,
    *,
    views: bool = False,
) -> tuple[Game, list[tuple[Any, ...]]]:
    """Play a whole game with random slappers, checking it as it goes; returns the game and
    the accepted actions in order."""
    rng = random.Random(slappers)
    game = Game.new(rules, seed, start)
    seats = rules.seats
    log: list[tuple[Any, ...]] = []
    check_all(game)
    while not game.over:
        seat, card = game.to_move, game.draw[game.to_move][0]
        expect_round = opens_round(game.centre, card)
        expect_allowed = allowed(game.centre)
        last = len(game.draw[seat]) == 1
        turn = game.reveal()
        log.append(("reveal", turn.seat, turn.card))
        assert (turn.seat, turn.card) == (seat, card)
        assert (turn.round is not None) == expect_round
        check_all(game)
        if views:
            check_views(game)
        if turn.round is None or turn.round.closed:
            if turn.round is not None:
                assert not expect_allowed  # R15: only an empty centre closes at once
            assert game.over == last
            continue
        assert turn.round.allowed == expect_allowed
        assert not game.over
        for _ in range(rng.randrange(3 * seats)):
            who = rng.randrange(seats)
            if rng.random() < 0.15:
                game.done(who)
                log.append(("done", who))
                continue
            pool = game.centre if rng.random() < 0.9 else list(DECK)
            target = rng.choice(pool)
            before = state(game)
            ms = rng.randrange(3000)
            try:
                game.slap(who, target, ms)
            except IllegalActionError:
                assert state(game) == before
            else:
                log.append(("slap", who, target, ms))
            check_all(game)
        if views:
            check_views(game)
        expected = resolve(game)
        game.close_round()
        assert ([list(p) for p in game.won], [list(p) for p in game.draw], game.centre) == (
            expected
        )
        assert game.over == last
        check_all(game)
        if views:
            check_views(game)
    result = game.result()
    assert result.points == tuple(sum(c.value for c in p) for p in game.won)
    assert result.flies == tuple(len(p) for p in game.won)
    return game, log


# -- the properties --------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(tables())
def test_r1_r3_every_card_is_always_in_exactly_one_place(
    state: Snapshot, table: tuple[Rules, Seed, int, int]
) -> None:
    play(*table, state)


@settings(max_examples=15, deadline=None)
@given(tables())
def test_r8_r25_no_view_ever_shows_a_card_never_revealed_until_the_end(
    state: Snapshot, table: tuple[Rules, Seed, int, int]
) -> None:
    play(*table, state, views=True)


@settings(max_examples=20, deadline=None)
@given(tables())
def test_r5_the_same_seed_and_the_same_slaps_give_the_same_game(
    state: Snapshot, table: tuple[Rules, Seed, int, int]
) -> None:
    a, log_a = play(*table, state)
    b, log_b = play(*table, state)
    assert log_a == log_b
    assert state(a) == state(b)
    assert a.result() == b.result()
    # And replaying only the accepted actions, on a game rebuilt from the deal, agrees too.
    rules, seed, start, _ = table
    c = Game(rules, a.dealt, start=start, removed=a.removed, seed=seed)
    for action in log_a:
        if action[0] == "reveal":
            if c.round is not None:
                c.close_round()
            assert c.reveal().card is action[2]
        elif action[0] == "slap":
            c.slap(action[1], action[2], action[3])
        else:
            c.done(action[1])
    if c.round is not None:
        c.close_round()
    assert state(c) == state(a)


def test_r5_a_game_is_the_same_in_another_process_whatever_its_hash_seed() -> None:
    program = (
        "import random\n"
        "from flyswat import Game, Rules\n"
        "g = Game.new(Rules(seats=3, remove=4), 'process', 1)\n"
        "rng = random.Random(7)\n"
        "while not g.over:\n"
        "    g.reveal()\n"
        "    if g.round is not None:\n"
        "        for seat in range(3):\n"
        "            for card in sorted(g.centre)[: rng.randrange(3)]:\n"
        "                g.slap(seat, card)\n"
        "        g.close_round()\n"
        "print(g.result(), sorted((c.text, p) for c, p in g.where().items()))\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", program],
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for hash_seed in ("1", "2")
    }
    assert len(outputs) == 1
    assert "Result(" in outputs.pop()


@settings(max_examples=200, deadline=None)
@given(seeds)
def test_r5_the_shuffle_is_a_permutation_of_the_deck(seed: Seed) -> None:
    deck = shuffled(seed)
    assert len(deck) == 112
    assert sorted(deck) == list(DECK)


@settings(max_examples=100, deadline=None)
@given(seeds, seeds)
def test_r5_the_shuffle_depends_on_the_seed(a: Seed, b: Seed) -> None:
    if str(a) != str(b):
        assert shuffled(a) != shuffled(b)
    else:
        assert shuffled(a) == shuffled(b)


def reference_shuffle(seed: Seed, *, reject: bool = True) -> list[Card]:
    """The algorithm as ``flyswat.shuffle``'s documentation states it, written afresh
    (``reject=False``: the same without rejection sampling, slightly biased)."""
    text = str(seed).encode("utf-8")

    def numbers() -> Any:
        k = 0
        while True:
            yield from struct.unpack(">8I", hashlib.sha256(text + b":" + str(k).encode()).digest())
            k += 1

    stream = numbers()
    deck = list(DECK)
    for i in range(111, 0, -1):
        while True:
            x = next(stream)
            if not reject or x < 2**32 - (2**32 % (i + 1)):
                break
        j = x % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


#: A seed whose number stream hits a rejection (found by search: about one seed in a million).
REJECTING_SEED = 1048423


def test_r5_the_shuffle_rejects_the_biased_draws_its_algorithm_names() -> None:
    assert reference_shuffle(REJECTING_SEED, reject=False) != reference_shuffle(REJECTING_SEED)
    assert shuffled(REJECTING_SEED) == reference_shuffle(REJECTING_SEED)


@settings(max_examples=100, deadline=None)
@given(seeds)
def test_r5_the_shuffle_follows_its_published_algorithm(seed: Seed) -> None:
    assert shuffled(seed) == reference_shuffle(seed)


@given(st.sampled_from(DECK))
def test_r3_every_card_text_round_trips(card: Card) -> None:
    assert Card.parse(card.text) is card
    assert str(card) == card.text


@settings(max_examples=500)
@given(
    st.one_of(
        st.text(max_size=6),
        st.from_regex(r"\A[RYGBPOSXr ]?[0-9]{0,2}-?[0-9]{0,3}\Z"),
    )
)
def test_r3_a_text_is_a_card_exactly_when_it_is_one_of_the_112_names(text: str) -> None:
    names = {c.text for c in DECK}
    try:
        card = Card.parse(text)
    except MalformedError as e:
        assert text not in names
        assert e.code == "bad_card"
    else:
        assert card.text == text


@settings(max_examples=100, deadline=None)
@given(
    st.integers(2, 8).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(-3, n + 2), st.integers(-3, 115))
    )
)
def test_every_refused_rule_option_is_malformed_and_every_other_one_plays(
    options: tuple[int, int, int],
) -> None:
    seats, start, remove = options
    try:
        game = Game.new(Rules(seats=seats, remove=remove), "options", start)
    except FlyswatError as e:
        assert isinstance(e, MalformedError)
        assert not (0 <= start < seats and 0 <= remove <= 112 - seats)
    else:
        assert 0 <= start < seats and 0 <= remove <= 112 - seats
        assert all(game.draw)
