"""Train an agent on the vectorised environment with a policy gradient, in numpy alone.

The agent plays seat 0 of ``SoloVectorEnv`` against three bots (``--bots``, default ``hard``)
at the same reaction speed as theirs, from the honest observation (the centre; it must judge
the allowed colours itself, R14). Its policy scores every legal entry of the action — each
centre fly, and "no hand" — with a linear function of a few features that it reads from the
observation, and picks each hand by softmax (the second hand among what the first left).
It learns by REINFORCE with a running baseline on each round's reward (the points the round
won or lost, R18–R20): a round's action hardly changes what the later rounds can give, so
the round is its own episode for the gradient.

After ``--iterations`` steps of ``--envs`` games (the budget: iterations × envs slap rounds)
it plays ``--games`` fresh games with its most likely action and prints its win share, with
a 95 % confidence interval; ``--plot`` draws the learning curve (mean points per round and
the win share of the games finished, per iteration). No torch: this runs on the default
install's numpy.

    uv run python examples/train_pg.py --plot docs/balance/learning.png
    uv run python examples/train_pg.py --bots normal --iterations 200
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from flyswat.env import NO_HAND
from flyswat.env.vector import SoloVectorEnv

VALUES = np.array([1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5] * 6, dtype=np.float64)
FEATURES = 9


def features(obs: np.ndarray) -> np.ndarray:
    """``(n, 97, FEATURES)``: what the agent reads about each entry of its action.

    For a fly: a bias, its value and value squared, whether its colour is the most numerous
    in the centre (the agent's own count, R14), that colour's count, how many flies of the
    most numerous colours there are, whether it is the best or second best of those by
    value; for "no hand": its own bias, and the number of flies in the centre.
    """
    n = obs.shape[0]
    centre = obs[:, :96]
    counts = centre.reshape(n, 6, 16).sum(axis=2)
    top = (counts == counts.max(axis=1, keepdims=True)) & (counts > 0)
    allowed = np.repeat(top, 16, axis=1) * centre
    value = np.broadcast_to(VALUES / 5.0, (n, 96))
    n_allowed = allowed.sum(axis=1, keepdims=True)
    better = (allowed[:, None, :] * (VALUES[None, None, :] > VALUES[None, :, None])).sum(axis=2)
    f = np.zeros((n, 97, FEATURES))
    f[:, :96, 0] = 1.0
    f[:, :96, 1] = value
    f[:, :96, 2] = value**2
    f[:, :96, 3] = allowed
    f[:, :96, 4] = np.repeat(counts, 16, axis=1) / 16.0
    f[:, :96, 5] = allowed * n_allowed / 8.0
    f[:, :96, 6] = allowed * (better == 0)
    f[:, :96, 7] = allowed * (better == 1)
    f[:, NO_HAND, 8] = 1.0
    f[:, NO_HAND, 5] = centre.sum(axis=1) / 16.0
    return f


def choose(
    w: np.ndarray, obs: dict, rng: np.random.Generator | None
) -> tuple[np.ndarray, np.ndarray]:
    """Each game's action (sampled, or the most likely with ``rng`` None) and the gradient of
    its log-probability with respect to ``w``, ``(n, FEATURES)``."""
    f = features(obs["observation"])
    legal = np.stack(obs["action_mask"], axis=1).astype(bool)  # (n, hands, 97)
    n, hands = legal.shape[0], legal.shape[1]
    scores = f @ w
    action = np.full((n, hands), NO_HAND, dtype=np.int64)
    grad = np.zeros((n, FEATURES))
    taken = np.zeros((n, 97), dtype=bool)
    for h in range(hands):
        ok = legal[:, h] & ~taken
        ok[:, NO_HAND] = True
        z = np.where(ok, scores, -np.inf)
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        if rng is None:
            pick = p.argmax(axis=1)
        else:
            pick = (p.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
        rows = np.arange(n)
        grad += f[rows, pick] - (p[:, :, None] * f).sum(axis=1)
        action[:, h] = pick
        taken[rows, pick] = pick != NO_HAND
    return action, grad


def train(args: argparse.Namespace) -> tuple[np.ndarray, list[tuple[float, float, float]]]:
    """Learn ``w``; returns it and the curve: per iteration, the mean reward, and the wins
    and the number of the games that ended."""
    env = SoloVectorEnv(args.envs, 4, levels=args.bots, speed=args.bots)
    rng = np.random.default_rng(args.seed)
    w = np.zeros(FEATURES)
    m = np.zeros(FEATURES)
    v = np.zeros(FEATURES)
    baseline = 0.0
    obs, _ = env.reset(seed=args.seed)
    curve = []
    done = np.zeros(args.envs, dtype=bool)
    for it in range(1, args.iterations + 1):
        action, grad = choose(w, obs, rng)
        live = ~done  # a game that ended last step is dealt anew: its action plays nothing
        obs, reward, done, _, _ = env.step(action)
        advantage = (reward - baseline) * live
        baseline += 0.05 * (reward[live].mean() - baseline) if live.any() else 0.0
        g = (advantage[:, None] * grad).mean(axis=0)
        m = 0.9 * m + 0.1 * g  # Adam
        v = 0.999 * v + 0.001 * g * g
        w += args.lr * (m / (1 - 0.9**it)) / (np.sqrt(v / (1 - 0.999**it)) + 1e-8)
        wins = [1.0 if env.result(int(k)).places[0] == 1 else 0.0 for k in np.flatnonzero(done)]
        curve.append((float(reward.mean()), float(sum(wins)), float(len(wins))))
    return w, curve


def evaluate(w: np.ndarray, args: argparse.Namespace) -> tuple[float, float]:
    """Win share (a shared first place counts as a fraction) with its 95 % half-width."""
    env = SoloVectorEnv(min(args.envs, args.games), 4, levels=args.bots, speed=args.bots)
    obs, _ = env.reset(seed=10**6 + args.seed)
    shares: list[float] = []
    while len(shares) < args.games:
        action, _ = choose(w, obs, None)
        obs, _, done, _, _ = env.step(action)
        for k in np.flatnonzero(done):
            places = env.result(int(k)).places
            shares.append(1.0 / places.count(1) if places[0] == 1 else 0.0)
    a = np.array(shares[: args.games])
    return float(a.mean()), float(1.96 * a.std(ddof=1) / np.sqrt(len(a)))


def plot(curve: list[tuple[float, float, float]], path: Path, title: str) -> None:
    """The learning curve: points per round (mean of 20 iterations) and the win share of the
    games finished (over the last 100 iterations, about 900 games), against the fair 25 %."""
    from matplotlib.figure import Figure

    data = np.array(curve)
    fig = Figure(figsize=(8, 4), layout="constrained")
    left = fig.subplots()
    left.plot(np.convolve(data[:, 0], np.ones(20) / 20, mode="valid"), color="tab:blue")
    left.set(xlabel="iteration", ylabel="points per round", title=title)
    left.set_ylabel("points per round (mean of 20 iterations)", color="tab:blue")
    right = left.twinx()
    k = np.ones(100)
    ended = np.maximum(np.convolve(data[:, 2], k, mode="valid"), 1)
    share = np.convolve(data[:, 1], k, mode="valid") / ended
    right.plot(np.arange(len(share)) + 99, share * 100, color="tab:orange")
    right.axhline(25, color="tab:orange", lw=0.8, ls="--")
    right.set_ylabel("win share, % (last 100 iterations; fair 25)", color="tab:orange")
    fig.savefig(path, format="png", dpi=100)


def main() -> None:
    """Train, evaluate, and plot if asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", default="hard", help="the three bots' level, and its speed")
    parser.add_argument("--envs", type=int, default=256, help="games stepped at once (256)")
    parser.add_argument("--iterations", type=int, default=1500, help="training steps (1500)")
    parser.add_argument("--lr", type=float, default=0.05, help="Adam step size (0.05)")
    parser.add_argument("--games", type=int, default=5000, help="games to measure (5000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plot", type=Path, help="write the learning curve here (PNG)")
    args = parser.parse_args()
    w, curve = train(args)
    rounds = args.iterations * args.envs
    print(f"trained on {rounds} slap rounds ({args.iterations} iterations × {args.envs} games)")
    print("weights:", np.round(w, 2).tolist())
    mean, ci = evaluate(w, args)
    print(f"win share against 3 {args.bots} bots: {mean:.1%} ± {ci:.1%} over {args.games} games "
          "(fair: 25.0%)")  # fmt: skip
    if args.plot is not None:
        plot(curve, args.plot, f"policy gradient against 3 {args.bots} bots")
        print(f"learning curve written to {args.plot}")


if __name__ == "__main__":
    main()
