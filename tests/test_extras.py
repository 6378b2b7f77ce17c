"""A plain install (no extras) is the game and the server on SQLite: nothing of it imports
rich, numpy, numba, matplotlib, Gymnasium, PettingZoo, psycopg or redis, and the commands
that need them say which extra to install. Checked in a fresh interpreter in which those
modules cannot be imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCK = textwrap.dedent(
    """
    import importlib.abc, sys
    EXTRA = {"rich", "numpy", "numba", "matplotlib", "gymnasium", "pettingzoo", "psycopg",
             "redis"}

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
        absent = {"rich", "numpy", "numba", "matplotlib", "gymnasium", "pettingzoo", "psycopg",
                  "redis"}
        assert not absent & set(sys.modules), absent & set(sys.modules)
        """
    )
    assert done.returncode == 0, done.stderr
    assert "simulate" in done.stdout and "serve" in done.stdout


def test_the_reference_simulator_names_the_sim_extra_it_needs() -> None:
    done = run_plain(
        """
        from flyswat.cli import main
        assert main(["simulate", "--games", "3", "--seats", "3"]) == 2
        """
    )
    assert done.returncode == 0, done.stderr
    assert "flyswat simulate needs rich: install the 'sim' extra" in done.stderr


def test_a_postgresql_store_and_redis_name_the_extras_they_need() -> None:
    done = run_plain(
        """
        from flyswat.cli import main
        for argv, extra in ((["--db", "postgresql://u@127.0.0.1:1/x"], "postgres"),
                            (["--redis", "redis://127.0.0.1:1/0"], "cluster")):
            try:
                main(["serve", "--workers", "1", *argv])
            except SystemExit as e:
                assert f"install the '{extra}' extra" in str(e.code), e.code
            else:
                raise AssertionError("serve started without " + extra)
        """
    )
    assert done.returncode == 0, done.stderr


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
