"""The PettingZoo environment in a dozen lines: four agents, each with its own speed.

Every agent plays "slap the best allowed fly", read from its own observation; seat 0 has the
``hard`` reaction model, the others ``normal``. Speed alone separates them — what 50 ms is
worth is measured in ``docs/BALANCE.md``.

    uv run python examples/parallel_env.py --games 200
"""

from __future__ import annotations

import argparse

import numpy as np

from flyswat.env import NO_HAND, FlyswatParallelEnv

VALUES = [1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5]  # of fly i: VALUES[i % 16] (R2)


def best_allowed(observation: np.ndarray, hands: int) -> np.ndarray:
    """Each hand on the next best fly of an allowed colour, judged from the centre block as a
    player would (R14; observation layout: ``flyswat.env.encoding``)."""
    centre = observation[:96]
    counts = centre.reshape(6, 16).sum(axis=1)
    top = (counts == counts.max()) & (counts > 0)
    flies = sorted(
        (i for i in range(96) if centre[i] and top[i // 16]), key=lambda i: -VALUES[i % 16]
    )
    action = np.full(hands, NO_HAND, dtype=np.int64)
    action[: min(hands, len(flies))] = flies[:hands]
    return action


def main() -> None:
    """Play ``--games`` games and print each seat's mean points."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    args = parser.parse_args()
    env = FlyswatParallelEnv(4, speeds=["hard", "normal", "normal", "normal"])
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for game in range(args.games):
        observations, _ = env.reset(seed=game)
        while env.agents:
            actions = {
                agent: best_allowed(obs["observation"], env.rules.hands)
                for agent, obs in observations.items()
            }
            observations, rewards, _, _, _ = env.step(actions)
            for agent, reward in rewards.items():
                totals[agent] += reward
    for agent, total in totals.items():
        print(f"{agent} ({env.speeds[int(agent[-1])].mu_ms:.0f} ms): {total / args.games:.1f}")


if __name__ == "__main__":
    main()
