"""The examples run on a fresh clone: the policy search and the policy-gradient learner, at a
tiny budget (their figures live in ``docs/BALANCE.md``)."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def example(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_policy_judges_the_allowed_colours_itself_r14() -> None:
    ps = example("policy_search")
    obs = np.zeros((1, 136), dtype=np.float32)
    for i in (16 * 0 + 15, 16 * 0 + 3, 16 * 2 + 14):  # R5, R2 and G5 in the centre
        obs[0, i] = 1.0
    honest = ps.act(obs, (0, 1), 2)
    assert honest.tolist() == [[15, 3]]  # red is the most numerous: R5 then R2, never G5
    helped = obs.copy()
    helped[0, 102 + 2] = 1.0  # flags that say green (the helped observation is believed)
    assert ps.act(helped, (0,), 2).tolist() == [[46, 96]]


def test_the_policy_search_measures_a_win_share() -> None:
    ps = example("policy_search")
    mean, ci = ps.win_share((1, 2), 40, "hard", 0, "hard")
    assert 0.0 <= mean <= 1.0 and ci >= 0.0


def test_the_learner_trains_and_reports_a_win_share(tmp_path: Path) -> None:
    pg = example("train_pg")
    args = argparse.Namespace(
        bots="hard", envs=16, iterations=120, lr=0.05, games=30, seed=3, plot=tmp_path / "c.png"
    )
    w, curve = pg.train(args)
    assert len(curve) == 120 and np.isfinite(w).all() and w.any()
    mean, _ = pg.evaluate(w, args)
    assert 0.0 <= mean <= 1.0
    pg.plot(curve, args.plot, "test")
    assert args.plot.stat().st_size > 0
