"""Vectorised environment throughput: slap-round steps per second of
:class:`flyswat.env.vector.SoloVectorEnv`, one core, against ``flyswat.env``'s ``SoloEnv``.

A step is one slap round of one game (the learner's action, three bots, the round resolved,
the reveals up to the next round, the observation and mask written; games that end are dealt
anew, by the reference shuffle). The learner lays each hand on a random legal entry, chosen
in numpy for all games at once; only the time inside ``step`` is counted. Compilation is
cached and done before timing. The figure is printed last, as ``<number> steps/s``.

    uv run python bench/vector.py                      # 256 games, 200 steps, best of 3
    uv run python bench/vector.py --envs 1024 --steps 100
    uv run python bench/vector.py --reference 2000     # and SoloEnv's figure, 2000 steps
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from flyswat.env import SoloEnv
from flyswat.env.vector import SoloVectorEnv


def random_legal(obs: dict, rng: np.random.Generator) -> np.ndarray:
    """For each game and hand, a random legal entry of the mask (NO_HAND included)."""
    columns = []
    for mask in obs["action_mask"]:
        noise = rng.random(mask.shape) * mask
        columns.append(noise.argmax(axis=1))
    return np.stack(columns, axis=1)


def vector_rate(envs: int, steps: int, levels: str, seed: int) -> float:
    """Steps per second inside ``SoloVectorEnv.step`` over ``steps`` steps of ``envs`` games."""
    env = SoloVectorEnv(envs, 4, levels=levels)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    spent = 0.0
    for _ in range(steps):
        actions = random_legal(obs, rng)
        start = time.perf_counter()
        obs, *_ = env.step(actions)
        spent += time.perf_counter() - start
    return envs * steps / spent


def reference_rate(steps: int, levels: str) -> float:
    """Steps per second of ``SoloEnv`` (the reference engine), random legal actions."""
    env = SoloEnv(4, levels=levels)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        legal = np.flatnonzero(obs["action_mask"][0])
        obs, _, done, _, _ = env.step(rng.choice(legal, size=2))
        if done:
            obs, _ = env.reset()
    return steps / (time.perf_counter() - start)


def main() -> None:
    """Measure and print steps per second (best of ``--repeat`` runs)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=256, help="games stepped at once (256)")
    parser.add_argument("--steps", type=int, default=200, help="steps per run (200)")
    parser.add_argument("--bots", default="normal", help="the three bots' level (normal)")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best counts (3)")
    parser.add_argument("--reference", type=int, default=0, help="SoloEnv steps to time too")
    args = parser.parse_args()
    vector_rate(8, 5, args.bots, 0)  # compile, or load the compiled cache
    if args.reference:
        print(
            f"SoloEnv (reference engine): {reference_rate(args.reference, args.bots):.0f} steps/s"
        )
    best = 0.0
    for run in range(args.repeat):
        figure = vector_rate(args.envs, args.steps, args.bots, seed=run + 1)
        print(f"run {run + 1}: {figure:.0f} steps/s")
        best = max(best, figure)
    print(f"{best:.0f} steps/s")


if __name__ == "__main__":
    main()
