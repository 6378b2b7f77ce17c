"""A plain install (no extras) is the game and the server: nothing of it imports numpy,
numba, matplotlib, Gymnasium or PettingZoo, and the commands that need them say which extra
to install. Checked in a fresh interpreter in which those modules cannot be imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCK = textwrap.dedent(
    """
    import importlib.abc, sys
    EXTRA = {"numpy", "numba", "matplotlib", "gymnasium", "pettingzoo"}

    class Absent(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in EXTRA:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Absent())
    import importlib.util
    real_find_spec = importlib.util.find_spec
    def find_spec(name, *args):
        return None if name.split(".")[0] in EXTRA else real_find_spec(name, *args)

    importlib.util.find_spec = find_spec
    """
)


def run_plain(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter where the extras' modules are missing."""
    return subprocess.run(
        [sys.executable, "-c", BLOCK + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_server_the_rules_and_the_cli_need_no_extra() -> None:
    done = run_plain(
        """
        import flyswat, flyswat.server.app, flyswat.bots, flyswat.record, flyswat.sim.reference
        from flyswat.cli import main
        try:
            main(["--help"])
        except SystemExit as e:
            assert e.code == 0
        assert not {"numpy", "numba", "matplotlib", "gymnasium", "pettingzoo"} & set(sys.modules)
        """
    )
    assert done.returncode == 0, done.stderr
    assert "simulate" in done.stdout and "serve" in done.stdout


def test_the_reference_simulator_runs_without_extras() -> None:
    done = run_plain(
        """
        from flyswat.cli import main
        assert main(["simulate", "--games", "3", "--seats", "3"]) == 0
        """
    )
    assert done.returncode == 0, done.stderr
    assert "3 bot games" in done.stdout


def test_the_fast_simulator_and_the_plot_name_the_extra_they_need() -> None:
    done = run_plain(
        """
        from flyswat.cli import main
        assert main(["simulate", "--fast", "--games", "3"]) == 2
        assert main(["simulate", "--games", "3", "--plot", "x.png"]) == 2
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("'sim' extra") == 2
    assert "pip install 'flyswat[sim]'" in done.stderr
