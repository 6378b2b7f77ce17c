"""The vectorised environment is ``SyncVectorEnv`` over ``SoloEnv``, only faster: the same
spaces, and on the same seeds the same deals; with deterministic reaction models and bots,
the same observations, masks, rewards, terminations and infos, step for step (R5–R25 through
the compiled rules)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from gymnasium.vector import SyncVectorEnv

from flyswat import bots
from flyswat.env import SoloEnv
from flyswat.env.vector import SoloVectorEnv
from flyswat.errors import MalformedError


def steady(floor: int, level: str = "hard") -> bots.Level:
    """``level``'s judgement with no randomness: no lapse, no misjudging, the best fly, and
    every hand at its floor (the ex-Gaussian sits far below it)."""
    return dataclasses.replace(
        bots.params(level),
        mu_ms=-1e6, sigma_ms=1.0, tau_ms=1.0, second_mu_ms=-1e6, second_sigma_ms=1.0,
        second_tau_ms=1.0, floor_ms=floor, misjudge=0.0, lapse=0.0, second_hand=1.0,
        temperature=0.0,
    )  # fmt: skip


def masked_random(obs: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    """A random legal action per game: for each hand, a fly of the mask or none."""
    masks = obs["action_mask"]
    out = np.empty((masks[0].shape[0], len(masks)), dtype=np.int64)
    for h, mask in enumerate(masks):
        for g in range(mask.shape[0]):
            out[g, h] = rng.choice(np.flatnonzero(mask[g]))
    return out


def assert_same(a: Any, b: Any, where: str) -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            assert_same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, tuple):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    else:
        assert np.array_equal(np.asarray(a), np.asarray(b)), where
        assert np.asarray(a).dtype == np.asarray(b).dtype, where


@pytest.mark.parametrize(("seats", "seat", "helped"), [(4, 0, False), (2, 1, True), (6, 3, False)])
def test_the_vector_env_steps_as_sync_vector_env_over_solo_env(
    seats: int, seat: int, helped: bool
) -> None:
    levels = [steady(290 + 10 * k, ("easy", "normal", "hard")[k % 3]) for k in range(seats - 1)]
    options = {"seat": seat, "levels": levels, "speed": steady(295), "helped": helped}
    n = 3
    sync = SyncVectorEnv([lambda: SoloEnv(seats, **options) for _ in range(n)])
    fast = SoloVectorEnv(n, seats, **options)
    assert fast.single_observation_space == sync.single_observation_space
    assert fast.single_action_space == sync.single_action_space
    rng = np.random.default_rng(seats)
    obs_a, info_a = sync.reset(seed=40)
    obs_b, info_b = fast.reset(seed=40)
    assert_same(obs_a, obs_b, "reset obs")
    assert_same(info_a, info_b, "reset info")
    ends = 0
    for t in range(150):
        actions = masked_random(obs_a, rng)
        out_a = sync.step(actions)
        out_b = fast.step(actions)
        for name, a, b in zip(
            ("obs", "reward", "terminated", "truncated", "info"), out_a, out_b, strict=True
        ):
            assert_same(a, b, f"step {t} {name}")
        obs_a = out_a[0]
        ends += int(out_a[2].sum())
    assert ends >= n  # every game ended at least once and was dealt anew (autoreset)


def test_the_same_seed_deals_the_same_games_whatever_the_bots() -> None:
    fast = SoloVectorEnv(4, 4, levels="normal")
    obs, _ = fast.reset(seed=9)
    again, _ = SoloVectorEnv(4, 4, levels="hard").reset(seed=9)
    # Up to the first round nothing random but the deal has happened: the same centres.
    assert np.array_equal(obs["observation"], again["observation"])


def test_bad_options_are_refused() -> None:
    with pytest.raises(MalformedError):
        SoloVectorEnv(0)
    with pytest.raises(MalformedError):
        SoloVectorEnv(2, 3, seat=3)
    with pytest.raises(MalformedError):
        SoloVectorEnv(2, levels="lightning")


def test_gymnasium_make_vec_builds_the_compiled_vector_env() -> None:
    import gymnasium

    from flyswat.env import SOLO_ID

    env = gymnasium.make_vec(
        SOLO_ID, num_envs=3, vectorization_mode="vector_entry_point", seats=3, levels="easy"
    )
    assert isinstance(env.unwrapped, SoloVectorEnv) and env.num_envs == 3
    obs, _ = env.reset(seed=1)
    assert obs["observation"].shape == (3, 136)


def best_allowed(observation: np.ndarray, hands: int) -> np.ndarray:
    """Each hand on the next most valuable fly of the most numerous colour (R14)."""
    values = np.array([1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5] * 6)
    centre = observation[:, :96]
    counts = centre.reshape(-1, 6, 16).sum(axis=2)
    top = np.repeat(counts == counts.max(axis=1, keepdims=True), 16, axis=1) & (centre > 0)
    order = np.argsort(np.where(top, -values, 99), axis=1, kind="stable")
    n = top.sum(axis=1)
    return np.stack([np.where(h < n, order[:, h], 96) for h in range(hands)], axis=1)


def test_with_random_bots_and_times_the_vector_env_plays_like_solo_env() -> None:
    # Points per game of one fixed policy against normal bots: the reference env's games and
    # the compiled ones agree within 4 standard errors (pooled). With the learner's hands 25
    # ms slower in the compiled games only, the same check gives z near 9: it has teeth.
    def points(env: Any, games: int) -> np.ndarray:
        obs, _ = env.reset(seed=3)
        out: list[float] = []
        total = np.zeros(env.num_envs)
        while len(out) < games:
            obs, reward, done, _, _ = env.step(best_allowed(obs["observation"], 2))
            total += reward
            out += total[done].tolist()
            total[done] = 0.0
        return np.array(out[:games])

    sync = SyncVectorEnv([lambda: SoloEnv(4, levels="normal", speed="hard") for _ in range(8)])
    a = points(sync, 240)
    b = points(SoloVectorEnv(256, 4, levels="normal", speed="hard"), 20_000)
    pooled = np.concatenate([a - a.mean(), b - b.mean()]).var()
    z = (a.mean() - b.mean()) / np.sqrt(pooled * (1 / len(a) + 1 / len(b)))
    assert abs(z) < 4, (a.mean(), b.mean(), z)
