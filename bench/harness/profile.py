"""py-spy on a running server: sample it without pausing it, then say where its time went.

Used by ``bench/load.py`` and ``bench/rhythm.py``. ``py-spy`` is not a dependency of the
project: ``uv tool install py-spy`` puts it in ``~/.local/bin``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path


def py_spy() -> str | None:
    """The ``py-spy`` executable, on the PATH or where ``uv tool install`` puts it; None when
    it is in neither place."""
    exe = shutil.which("py-spy") or str(Path.home() / ".local/bin/py-spy")
    return exe if Path(exe).exists() else None


def profile(pid: int, seconds: float, out: Path) -> subprocess.Popen[bytes] | None:
    """Start py-spy sampling ``pid`` for ``seconds`` at 100 Hz (collapsed stacks to ``out``);
    None (and a line printed) when py-spy is not installed."""
    exe = py_spy()
    if exe is None:
        print("py-spy not found: uv tool install py-spy")
        return None
    cmd = [exe, "record", "-p", str(pid), "-d", str(int(seconds)), "-r", "100",
           "--nonblocking", "-f", "raw", "-o", str(out)]  # fmt: skip
    # More of py-spy's options from the environment: ``--gil`` (only the samples that hold
    # the interpreter: where the Python time goes), ``--native`` (C frames too).
    cmd += os.environ.get("FLYSWAT_PYSPY_ARGS", "").split()
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def summarize_profile(path: Path, seconds: float, top: int = 25) -> list[str]:
    """Lines of the profile: busy share, then functions by own and by total samples."""
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    busy = 0
    text = path.read_text() if path.exists() else ""
    for line in text.splitlines():
        stack, _, n = line.rpartition(" ")
        count = int(n)
        frames = [f.split(" (")[0] + " (" + f.split(" (")[-1].split(":")[0].split("/")[-1] + ")"
                  for f in stack.split(";")]  # fmt: skip
        busy += count
        own[frames[-1]] += count
        for f in set(frames):
            total[f] += count
    if not busy:
        return ["no samples (py-spy failed, or the process was gone)"]
    lines = [f"server busy: {busy / (seconds * 100):.0%} of the samples ({busy} at 100 Hz)"]
    lines.append("own time (share of busy samples):")
    lines += [f"  {n / busy:6.1%}  {f}" for f, n in own.most_common(top)]
    lines.append("total time, including callees:")
    lines += [f"  {n / busy:6.1%}  {f}" for f, n in total.most_common(top * 2)]
    return lines
