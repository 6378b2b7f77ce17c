"""The browser client's pure parts (reducer, intents, rules) under Node's own test runner:
``node --test tests/js/``. Part of ``uv run pytest``, so one command runs every test."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_node_tests_of_the_browser_client_pass() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on this machine")
    run = subprocess.run(
        [node, "--test", "tests/js/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
