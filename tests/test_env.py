"""The research environments: PettingZoo's and Gymnasium's own checks, and our contracts."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import parallel_api_test, parallel_seed_test

from flyswat import bots
from flyswat.cards import DECK, Card
from flyswat.engine import Game
from flyswat.env import (
    NO_HAND,
    OBS_SIZE,
    SOLO_ID,
    FlyswatParallelEnv,
    SoloEnv,
    action_mask,
    encode,
    parallel_env,
    reaction_times,
)
from flyswat.errors import MalformedError
from flyswat.record import to_record, verify_record
from flyswat.rules import Rules
from flyswat.view import view


def masked_random(env: FlyswatParallelEnv, obs: dict, rng: np.random.Generator) -> dict:
    """A random legal action for every live agent."""
    actions = {}
    for agent in env.agents:
        legal = np.flatnonzero(obs[agent]["action_mask"][0])
        actions[agent] = rng.choice(legal, size=env.rules.hands)
    return actions


# -- conformance suites written by others --------------------------------------------------


def test_pettingzoo_parallel_api_test_passes_for_four_agents() -> None:
    parallel_api_test(FlyswatParallelEnv(4), num_cycles=1000)


def test_pettingzoo_parallel_api_test_passes_with_one_hand_speeds_and_bot_seats() -> None:
    env = FlyswatParallelEnv(6, remove=12, speeds=["hard", "easy"], bot_seats={2: "normal"})
    parallel_api_test(env, num_cycles=1000)
    assert "seat_2" not in env.possible_agents


def test_pettingzoo_parallel_seed_test_passes() -> None:
    parallel_seed_test(lambda: parallel_env(seats=4))


def test_gymnasium_check_env_passes_for_one_learner_against_bots() -> None:
    check_env(gymnasium.make(SOLO_ID).unwrapped)
    check_env(
        gymnasium.make(
            SOLO_ID, seats=3, seat=2, levels=["easy", "hard"], speed="hard", render_mode="ansi"
        ).unwrapped
    )


# -- the episode -----------------------------------------------------------------------------


def test_each_step_is_one_slap_round_with_something_to_slap() -> None:
    env = FlyswatParallelEnv(4)
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    while env.agents:
        game = env.game
        assert game is not None and game.round is not None and game.centre
        rounds_before = sum(t.round is not None for t in game.turns)
        obs, *_ = env.step(masked_random(env, obs, rng))
        if env.agents:
            opened = sum(t.round is not None for t in game.turns) - rounds_before
            assert opened >= 1  # empty-centre rounds (R15) are played through, not stepped


def test_rewards_add_up_to_each_seats_final_points_r23() -> None:
    env = FlyswatParallelEnv(4)
    obs, _ = env.reset(seed=11)
    rng = np.random.default_rng(1)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        obs, rewards, _, truncs, infos = env.step(masked_random(env, obs, rng))
        for agent, r in rewards.items():
            totals[agent] += r
        assert not any(truncs.values())
    assert env.game is not None and env.game.over  # R22 ends the episode
    points = env.game.result().points
    assert [totals[f"seat_{k}"] for k in range(4)] == [float(p) for p in points]
    assert all(info["place"] >= 1 for info in infos.values())


def test_an_episode_is_a_game_of_the_rules_its_record_verifies() -> None:
    env = FlyswatParallelEnv(5, remove=20, speeds=["hard", "normal"], bot_seats={4: "easy"})
    obs, _ = env.reset(seed=5)
    rng = np.random.default_rng(2)
    while env.agents:
        obs, *_ = env.step(masked_random(env, obs, rng))
    game = env.game
    assert game is not None
    seats = [{"name": f"p{k}", "kind": "human"} for k in range(5)]
    record = to_record(game, seats, id="env", started_at="2026-11-29T12:00:00Z")
    assert verify_record(record) == []


def test_hands_arrive_in_the_order_of_their_reaction_times_ties_by_seat() -> None:
    env = FlyswatParallelEnv(4, speeds=["easy", "hard", "normal", "hard"])
    obs, _ = env.reset(seed=8)
    rng = np.random.default_rng(3)
    game = env.game
    assert game is not None
    while env.agents:
        obs, *_ = env.step(masked_random(env, obs, rng))
        closed = [t.round for t in game.turns if t.round is not None and t.round.slaps]
        if closed:
            slaps = closed[-1].slaps
            keys = [(s.ms, s.seat) for s in slaps]
            assert keys == sorted(keys)
            assert all(s.ms is not None and env.rules.in_window(s.ms) for s in slaps)


def test_a_faster_reaction_model_wins_the_race_for_the_same_fly() -> None:
    env = FlyswatParallelEnv(2, speeds=["hard", "easy"])
    env.reset(seed=21)
    firsts = {0: 0, 1: 0}
    game = env.game
    assert game is not None
    while env.agents:
        best = max(game.centre, key=lambda c: (c.value, -c.index))
        env.step({a: [best.index, NO_HAND] for a in env.agents})
        last = next(t.round for t in reversed(game.turns) if t.round and t.round.slaps)
        firsts[last.slaps[0].seat] += 1
    assert firsts[0] > 3 * firsts[1]


def test_entries_off_the_centre_and_repeated_flies_are_not_laid_r16() -> None:
    env = FlyswatParallelEnv(3)
    env.reset(seed=4)
    game = env.game
    assert game is not None
    inside = game.centre[0]
    outside = next(c for c in DECK[:96] if c not in game.centre)
    assert env.targets(0, [outside.index, NO_HAND]) == []
    assert env.targets(0, [inside.index, inside.index]) == [inside]
    assert env.targets(0, np.array([NO_HAND, inside.index])) == [inside]
    assert env.targets(0, None) == []


def test_the_same_seed_and_actions_give_the_same_episode() -> None:
    def run() -> list[float]:
        env = FlyswatParallelEnv(4, speeds="easy")
        obs, _ = env.reset(seed=99)
        rng = np.random.default_rng(7)
        out = []
        while env.agents:
            obs, rewards, *_ = env.step(masked_random(env, obs, rng))
            out += list(rewards.values())
        return out

    assert run() == run()


def test_step_without_a_game_is_refused() -> None:
    env = FlyswatParallelEnv(2)
    with pytest.raises(MalformedError):
        env.step({})


def test_bad_options_are_refused() -> None:
    with pytest.raises(MalformedError):
        FlyswatParallelEnv(4, speeds="lightning")
    with pytest.raises(MalformedError):
        FlyswatParallelEnv(2, bot_seats={0: "normal", 1: "normal"})
    with pytest.raises(MalformedError):
        SoloEnv(3, seat=3)


# -- what an agent sees (R25) ---------------------------------------------------------------


def test_observation_encodes_the_centre_counts_and_the_allowed_colour_r14() -> None:
    cards = ["R1-1", "R2-1", "R3-1", "R4-1", "R5-1", "Y1-1", "Y2-1", "G3-1", "P4-1"]
    reveal = [Card.parse(t) for t in [*cards, "B2-1"]]
    rest = [c for c in DECK if c not in reveal]
    piles: list[list[Card]] = [[], []]
    for k, card in enumerate([*reveal, *rest]):
        piles[k % 2].append(card)
    game = Game(Rules(seats=2), piles)
    for _ in range(10):
        game.reveal()
    assert game.round is not None and game.round.trigger == Card.parse("B2-1")  # R13
    obs = encode(view(game, 0))
    assert obs.shape == (OBS_SIZE,) and obs.dtype == np.float32
    assert obs.min() >= 0.0 and obs.max() <= 1.0
    assert [i for i in range(96) if obs[i]] == sorted(Card.parse(t).index for t in cards)
    assert list(obs[96:102] * 16) == [5, 2, 1, 0, 1, 0]
    assert list(obs[102:108]) == [0] * 6  # honest by default: the agent judges R14 itself
    helped = encode(view(game, 0), helped=True)
    assert list(helped[102:108]) == [1, 0, 0, 0, 0, 0]  # only red is allowed
    assert np.array_equal(np.delete(helped, range(102, 108)), np.delete(obs, range(102, 108)))
    assert list(obs[108:115]) == [0, 0, 0, 0, 1, 0, 0]  # a blue fly opened the round
    mask = action_mask(view(game, 1))
    assert len(mask) == 2 and all(m.dtype == np.int8 for m in mask)
    assert set(np.flatnonzero(mask[0])) == {*(Card.parse(t).index for t in cards), NO_HAND}


def test_observation_does_not_change_with_what_the_seat_cannot_see_r25() -> None:
    game = Game.new(Rules(seats=3), seed="hidden")
    while not (game.round is not None and game.centre and any(game.won)):
        if game.round is not None:
            for seat in range(3):
                if game.centre[seat:]:
                    game.slap(seat, game.centre[seat])
            game.close_round()
        else:
            game.reveal()
    before = encode(view(game, 0))
    for seat in range(3):
        game.draw[seat].reverse()  # hidden from everyone (R8)
    game.won[1].reverse()  # another seat's won cards: counts only (R25)
    game.won[2].reverse()
    assert np.array_equal(encode(view(game, 0)), before)


def test_reaction_times_follow_the_bots_model_and_floor() -> None:
    import random

    p = bots.params("normal")
    rng = random.Random(0)
    draws = [reaction_times(p, 2, rng) for _ in range(4000)]
    assert all(p.floor_ms <= a < b for a, b in draws)
    first = np.array([a for a, _ in draws])
    assert abs(first.mean() - (p.mu_ms + p.tau_ms)) < 10  # ex-Gaussian mean mu + tau
