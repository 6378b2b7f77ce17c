"""A tiny search-based agent for flyswat, through the vectorised Gymnasium environment.

The agent reads only its observation (:mod:`flyswat.env.encoding`). By default that is the
honest one — the centre, no allowed-colour flags — and the agent counts the centre block
itself to judge the allowed colours (R14), which a program does without error; ``--helped``
hands it the flags instead (the same judgement, so the same figures). It never lapses. Its one
choice is *which* allowed flies to race for. A policy is a tuple of ranks in the allowed flies
sorted by value (best first): ``(0, 1)`` lays the two hands on the two best; ``(1, 2)`` leaves
the best one to the bots and takes the next two.

The search plays every candidate for ``--search`` games against three bots at level ``--bots``
(``SoloVectorEnv``: the bots of the compiled kernel), keeps the best, and measures it — and
the plain greedy ``(0, 1)`` — on ``--games`` fresh games. Win share counts a shared first
place as a fraction (R24); a fair share at a table of 4 is 25 %.

    uv run python examples/policy_search.py                           # speed and bots normal
    uv run python examples/policy_search.py --speed hard --bots hard
    uv run python examples/policy_search.py --speed easy

Measured figures, with these commands, are in ``docs/BALANCE.md``.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

from flyswat.env import NO_HAND
from flyswat.env.vector import SoloVectorEnv

VALUES = np.array([1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5] * 6)  # of fly i (R2)
CANDIDATES = [(0,), *itertools.permutations(range(4), 2)]


def allowed(observation: np.ndarray) -> np.ndarray:
    """``(n, 96)``: 1 for the flies in the centre of an allowed colour — the helped flags, or
    else the agent's own count of the centre block (R14)."""
    centre = observation[:, :96]
    flags = observation[:, 102:108]
    counts = centre.reshape(-1, 6, 16).sum(axis=2)
    own = (counts == counts.max(axis=1, keepdims=True)) & (counts > 0)
    top = np.where(flags.any(axis=1, keepdims=True), flags > 0, own)
    return centre * np.repeat(top, 16, axis=1)


def act(observation: np.ndarray, ranks: tuple[int, ...], hands: int) -> np.ndarray:
    """``(n, hands)``: hand ``h`` on the allowed fly of rank ``ranks[h]`` (by value, ties by
    card index), if there is one; else no hand."""
    ok = allowed(observation)
    key = np.where(ok > 0, -VALUES * 100 + np.arange(96), 10**6)
    order = np.argsort(key, axis=1, kind="stable")
    n_ok = ok.sum(axis=1).astype(int)
    action = np.full((observation.shape[0], hands), NO_HAND, dtype=np.int64)
    for h, rank in enumerate(ranks[:hands]):
        action[:, h] = np.where(rank < n_ok, order[:, rank], NO_HAND)
    return action


def win_share(
    ranks: tuple[int, ...],
    games: int,
    speed: str,
    seed: int,
    bots: str = "normal",
    helped: bool = False,
    envs: int = 200,
) -> tuple[float, float]:
    """Mean win share of the policy ``ranks`` at seat 0 against 3 bots at level ``bots``,
    and its 95 % confidence half-width, over ``games`` games seeded from ``seed``."""
    env = SoloVectorEnv(min(envs, games), 4, levels=bots, speed=speed, helped=helped)
    obs, _ = env.reset(seed=seed)
    shares: list[float] = []
    while len(shares) < games:
        obs, _, done, _, _ = env.step(act(obs["observation"], ranks, env.rules.hands))
        for g in np.flatnonzero(done):
            places = env.result(int(g)).places
            shares.append(1.0 / places.count(1) if places[0] == 1 else 0.0)
    a = np.array(shares[:games])
    return float(a.mean()), float(1.96 * a.std(ddof=1) / np.sqrt(len(a)))


def main() -> None:
    """Search, then measure the best policy and the greedy one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed", default="normal", help="the agent's reaction model")
    parser.add_argument("--bots", default="normal", help="the three bots' level")
    parser.add_argument("--search", type=int, default=2000, help="games per candidate")
    parser.add_argument("--games", type=int, default=20000, help="games to measure the best")
    parser.add_argument(
        "--helped", action="store_true", help="the observation with the allowed colours"
    )
    args = parser.parse_args()
    scores = {
        r: win_share(r, args.search, args.speed, 0, args.bots, args.helped) for r in CANDIDATES
    }
    for ranks, (mean, ci) in sorted(scores.items(), key=lambda x: -x[1][0]):
        print(f"search {ranks}: {mean:.1%} ± {ci:.1%}")
    best = max(scores, key=lambda r: scores[r][0])
    for label, ranks in (("best", best), ("greedy", (0, 1))):
        mean, ci = win_share(ranks, args.games, args.speed, 10**6, args.bots, args.helped)
        print(f"{label} {ranks} at speed {args.speed}: win share {mean:.1%} ± {ci:.1%} "
              f"over {args.games} games against 3 {args.bots} bots (fair: 25.0%)")  # fmt: skip


if __name__ == "__main__":
    main()
