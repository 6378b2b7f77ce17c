"""``flyswat simulate --ray``: the games spread over a local Ray cluster give the results that
``--jobs`` gives for the same seed, with the same summary (slow-ish: Ray takes seconds to
start, so this is one short run)."""

from __future__ import annotations

import pytest

from flyswat.cli import main
from flyswat.errors import MalformedError
from flyswat.sim.pool import run_chunks

pytest.importorskip("ray")


def test_a_simulation_on_a_local_ray_cluster_equals_the_same_seed_over_jobs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    common = ["simulate", "--games", "24", "--seats", "3", "--bots", "easy,hard", "--seed", "9"]
    assert main([*common, "--jobs", "2"]) == 0
    over_jobs = capsys.readouterr()
    assert main([*common, "--ray", "--jobs", "2"]) == 0
    on_ray = capsys.readouterr()
    assert "24 bot games" in over_jobs.out
    assert on_ray.out == over_jobs.out  # the same summary, figure for figure
    assert "24/24" in on_ray.err  # and the same progress bar, run to its end


def test_jobs_below_one_are_refused_before_anything_runs() -> None:
    with pytest.raises(MalformedError, match="jobs must be 1 or more"):
        run_chunks(abs, [1, 2], jobs=0, ray="local")
