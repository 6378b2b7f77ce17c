"""PPO from RLlib on ``SoloEnv``: one learning seat against three bots, several env runners.

RLlib needs torch, which this project's own tools never install (through uv, torch is a CUDA
build of several GB): this example runs in a pip virtual environment of its own, not in the
dev group or CI. On the project's machines a CPU build of torch 2.13.0 for Python 3.11 is on
disk for pip::

    python3.11 -m venv ~/venvs/rllib
    ~/venvs/rllib/bin/pip install torch==2.13.0 'ray[rllib]>=2.40,<3'
    ~/venvs/rllib/bin/pip install -e '.[env,sim]'          # flyswat itself, from a clone
    ~/venvs/rllib/bin/python examples/train_rllib.py --iterations 12 --env-runners 2

Elsewhere, ``pip install torch --index-url https://download.pytorch.org/whl/cpu`` gives a
CPU build. The environment is :class:`flyswat.env.SoloEnv` (its Gymnasium id
``flyswat/Solo-v0``), its observation vector only (:mod:`flyswat.env.encoding`: the honest
one, which leaves judging the allowed colour to the agent, R14) and its action as it is, one
fly index or "no hand" per hand; a hand on a fly not in the centre is simply not laid. The
reward is the points a round won or cost the seat (R18–R20), so an episode's return is the
seat's points over the game.

Reproducible from ``--seed``: RLlib seeds each env runner's environments and the learner from
it (``config.debugging(seed=...)``), so the same command gives the same curve on the same
machine and versions. The curve (mean episode return per iteration, with the return of the
greedy policy of ``examples/policy_search.py`` and of a random policy for scale) is saved as
``--plot`` (PNG) and its numbers as ``--json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from flyswat.env import SoloEnv

HERE = Path(__file__).resolve().parent


class SoloVector(gym.ObservationWrapper):
    """``SoloEnv`` with its observation vector alone (RLlib's default model takes a Box)."""

    def __init__(self, env: SoloEnv) -> None:
        super().__init__(env)
        self.observation_space = env.observation_space["observation"]

    def observation(self, observation: dict[str, Any]) -> Any:
        return observation["observation"]


class RankActions(gym.ActionWrapper):
    """Actions as ``examples/policy_search.py`` names them: which of the allowed flies, by
    rank of value, each hand races for (``CANDIDATES``: one hand on the best, the two best,
    the second and third…). The agent still judges the allowed colour itself from the centre
    (R14); what it learns is the race. A small Discrete space, which PPO learns in a few
    thousand rounds where the raw 97 x 97 action takes far longer."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.search = _policy_search()
        self.action_space = gym.spaces.Discrete(len(self.search.CANDIDATES))
        self.last: Any = None

    def reset(self, **kwargs: Any) -> Any:
        obs, info = self.env.reset(**kwargs)
        self.last = obs
        return obs, info

    def step(self, action: Any) -> Any:
        out = self.env.step(self.action(action))
        self.last = out[0]
        return out

    def action(self, action: Any) -> Any:
        ranks = self.search.CANDIDATES[int(action)]
        return self.search.act(self.last[None, :], ranks, 2)[0]


def _policy_search() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("policy_search", HERE / "policy_search.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_env(config: dict[str, Any] | None = None) -> gym.Env:
    """The training environment: 4 seats, bots at ``levels``, a half-length game (R6);
    ``actions`` ``raw`` (the environment's own) or ``ranks`` (:class:`RankActions`)."""
    config = dict(config or {})
    env = SoloVector(SoloEnv(seats=4, levels=config.get("levels", "normal"),
                             remove=config.get("remove", 56)))  # fmt: skip
    return RankActions(env) if config.get("actions") == "ranks" else env


def baseline(policy: str, games: int, seed: int, levels: str) -> float:
    """The mean return over ``games`` of the ``greedy`` or ``random`` policy, for scale."""
    search = _policy_search()
    env = make_env({"levels": levels})
    rng = np.random.default_rng(seed)
    returns = []
    for g in range(games):
        obs, _ = env.reset(seed=seed + g)
        total, done = 0.0, False
        while not done:
            if policy == "greedy":
                action = search.act(obs[None, :], (0, 1), 2)[0]
            else:
                action = rng.integers(0, 97, size=2)
            obs, reward, done, _, _ = env.step(action)
            total += float(reward)
        returns.append(total)
    return float(np.mean(returns))


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Train PPO for ``args.iterations``; the curve and what it took."""
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.tune.registry import register_env

    ray.init(num_cpus=args.env_runners + 1, include_dashboard=False, log_to_driver=False)
    register_env("flyswat-solo", make_env)
    config = (
        PPOConfig()
        .environment("flyswat-solo", env_config={"levels": args.bots, "actions": args.actions})
        .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=1)
        .training(
            train_batch_size_per_learner=args.batch,
            minibatch_size=256,
            num_epochs=6,
            lr=3e-4,
            gamma=0.99,
            entropy_coeff=0.01,
        )
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    curve: list[dict[str, float]] = []
    started = time.perf_counter()
    for i in range(args.iterations):
        result = algo.train()
        runners = result.get("env_runners", {})
        point = {
            "iteration": i + 1,
            "return_mean": float(runners.get("episode_return_mean", float("nan"))),
            "env_steps": float(result.get("num_env_steps_sampled_lifetime",
                                          runners.get("num_env_steps_sampled_lifetime", 0))),
            "seconds": time.perf_counter() - started,
        }  # fmt: skip
        curve.append(point)
        args.json.write_text(json.dumps({"curve": curve}, indent=1) + "\n")  # so far
        print(
            f"iteration {i + 1:3d}: return {point['return_mean']:7.2f}  "
            f"steps {point['env_steps']:8.0f}  {point['seconds']:6.1f} s",
            flush=True,
        )
    algo.stop()
    ray.shutdown()
    return {"curve": curve, "env_runners": args.env_runners, "seed": args.seed,
            "bots": args.bots, "batch": args.batch, "actions": args.actions}  # fmt: skip


def plot(run: dict[str, Any], path: Path) -> None:
    """The learning curve, with the baselines as lines."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.2), layout="constrained")
    ax = fig.subplots()
    steps = [p["env_steps"] for p in run["curve"]]
    ax.plot(steps, [p["return_mean"] for p in run["curve"]], marker="o", label="PPO (RLlib)")
    for name, value in run["baselines"].items():
        ax.axhline(value, linestyle="--", color="grey" if name == "random" else "tab:green",
                   label=f"{name} policy")  # fmt: skip
    ax.set(title=f"PPO on SoloEnv vs 3 {run['bots']} bots, {run['actions']} actions "
           f"({run['env_runners']} env runners, seed {run['seed']})",
           xlabel="environment steps (slap rounds)",
           ylabel="mean points per game")  # fmt: skip
    ax.legend()
    fig.savefig(path, format="png", dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--env-runners", type=int, default=2)
    parser.add_argument("--batch", type=int, default=2000, help="env steps per iteration")
    parser.add_argument("--bots", default="normal", choices=["easy", "normal", "hard"])
    parser.add_argument("--actions", default="raw", choices=["raw", "ranks"],
                        help="the environment's own action, or policy_search's ranks")  # fmt: skip
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--baseline-games", type=int, default=200)
    parser.add_argument("--plot", type=Path, default=Path("rllib_curve.png"))
    parser.add_argument("--json", type=Path, default=Path("rllib_curve.json"))
    args = parser.parse_args()
    run = train(args)
    run["baselines"] = {p: baseline(p, args.baseline_games, 10_000, args.bots)
                        for p in ("random", "greedy")}  # fmt: skip
    args.json.write_text(json.dumps(run, indent=1) + "\n")
    plot(run, args.plot)
    print(f"baselines: {run['baselines']}; curve in {args.plot}, numbers in {args.json}")


if __name__ == "__main__":
    main()
