"""Find flaky tests on purpose: run the browser, server and cluster lanes several times, each
in a random order of its own (pytest-randomly, one seed a run), and report every test that
failed in any run, with the seeds that make it fail again.

    uv run python bench/flakes.py --rounds 3              # the three lanes, 3 runs
    uv run python bench/flakes.py --rounds 5 -m cluster   # one lane
    uv run pytest -p randomly -p no:cacheprovider --randomly-seed=SEED -m "..."  # one again

Each run is ``pytest -p randomly --randomly-seed=SEED -n WORKERS`` with a JUnit report in
``--out``; the summary is printed and written to ``--out/flakes.json``. Exit status: 0 when
no test failed, 1 when some did.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LANES = "browser or server or cluster"


def failures(report: Path) -> dict[str, str]:
    """The tests that failed or erred in a JUnit report: ``{node id: first line}``."""
    found = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        for kind in ("failure", "error"):
            bad = case.find(kind)
            if bad is not None:
                path = case.get("classname", "").replace(".", "/")
                name = f"{path}.py::{case.get('name')}"
                found[name] = (bad.get("message") or kind).splitlines()[0][:200]
    return found


def run(seed: int, lanes: str, workers: int, out: Path, extra: list[str]) -> tuple[int, float]:
    """One run of ``lanes`` in the order of ``seed``; its exit status and seconds."""
    cmd = [sys.executable, "-m", "pytest", "-m", lanes, "-p", "randomly", "-p",
           "no:cacheprovider", f"--randomly-seed={seed}", "-q", "-n", str(workers),
           f"--junitxml={out / f'run-{seed}.xml'}", *extra]  # fmt: skip
    began = time.monotonic()
    status = subprocess.call(cmd, cwd=ROOT, stdout=subprocess.DEVNULL)
    return status, time.monotonic() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs (each a new order)")
    parser.add_argument("-m", dest="lanes", default=LANES, help=f"lanes (default: {LANES})")
    parser.add_argument(
        "-n", dest="workers", type=int, default=6, help="pytest-xdist workers (as .ci/run)"
    )
    parser.add_argument("--seed", type=int, default=None, help="first seed (default: random)")
    parser.add_argument("--out", type=Path, default=ROOT / "test-artifacts" / "flakes")
    parser.add_argument("extra", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    first = args.seed if args.seed is not None else random.randrange(1, 2**31)
    failed: dict[str, list[int]] = defaultdict(list)
    said: dict[str, str] = {}
    runs = []
    for k in range(args.rounds):
        seed = first + k
        status, took = run(seed, args.lanes, args.workers, args.out, args.extra)
        report = args.out / f"run-{seed}.xml"
        bad = failures(report) if report.exists() else {"(no report)": f"pytest ended {status}"}
        for name, line in bad.items():
            failed[name].append(seed)
            said.setdefault(name, line)
        runs.append({"seed": seed, "status": status, "seconds": round(took), "failed": len(bad)})
        print(f"run {k + 1}/{args.rounds} seed {seed}: {len(bad)} failed in {took:.0f} s",
              flush=True)  # fmt: skip
    flaky = {n: {"seeds": s, "said": said[n]} for n, s in sorted(failed.items())}
    summary = {"lanes": args.lanes, "runs": runs, "flaky": flaky}
    (args.out / "flakes.json").write_text(json.dumps(summary, indent=2) + "\n")
    for name, seeds in sorted(failed.items()):
        print(f"FAILED {len(seeds)}/{args.rounds} {name} (seeds {seeds}): {said[name]}")
    print(f"{args.rounds} runs, {len(failed)} test(s) failed at least once")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
