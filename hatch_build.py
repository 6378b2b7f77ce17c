"""The server's hot path compiled with mypyc, at install (docs/BENCHMARKS.md, *The hot path
compiled*).

The table, the rules core, the wire, the executor and the socket's session are plain, strictly
typed Python; mypyc turns those modules into C extensions that run the same code with less of
the interpreter (the whole server: about 13 % less CPU than interpreted). Nothing else
changes: the same sources, the same tests, and a machine without a C compiler runs them
interpreted.

- A wheel (``uv build``): the extensions beside their sources, in the wheel.
- The checkout (``uv sync``, an editable install): the extensions in ``build/native/`` with a
  manifest of the sources they were made from; :mod:`flyswat.native` loads them only while
  every one of those sources is unchanged, so an edited file runs as written (interpreted)
  until the next build: ``uv run python hatch_build.py`` (about a minute).

``FLYSWAT_NATIVE=0`` at install skips the compile (and at run time, the loading).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
#: The modules compiled, relative to ``src``: the path of every message (socket to table to
#: every seat), and the fair-play detector, which weighs each player's last hundred games at
#: every game's end of players (docs/BENCHMARKS.md, *A game's end of players*). Each must
#: run compiled as it does interpreted: CI runs the whole suite on them
#: (``tests/test_native.py`` requires it). Why the rest are not: docs/BENCHMARKS.md.
MODULES = (
    "flyswat/arbiter.py",
    "flyswat/bucket.py",
    "flyswat/wire.py",
    "flyswat/table/context.py",
    "flyswat/table/core.py",
    "flyswat/table/lifecycle.py",
    "flyswat/table/reactions.py",
    "flyswat/table/seats.py",
    "flyswat/table/sessions.py",
    "flyswat/table/turns.py",
    "flyswat/server/connection.py",
    "flyswat/server/frames.py",
    "flyswat/engine.py",
    "flyswat/view.py",
    "flyswat/server/executor.py",
    "flyswat/fairplay.py",
)
MANIFEST = "manifest.json"

_SETUP = """\
import sys
from setuptools import setup
from mypyc.build import mypycify

target, paths = sys.argv.pop(1), sys.argv.pop(1).split("\\n")
setup(name="flyswat-native", ext_modules=mypycify(paths, opt_level="3", target_dir=target))
"""


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(src: Path, out: Path) -> str | None:
    """Compile :data:`MODULES` of ``src`` into ``out`` (replaced whole, with its manifest).
    Returns None when done, else why not (no C compiler, mypyc missing, a failed build)."""
    compiler = sysconfig.get_config_var("CC") or "cc"
    if shutil.which(compiler.split()[0]) is None and shutil.which("cc") is None:
        return "no C compiler"
    try:
        import mypyc  # noqa: F401
        import setuptools  # noqa: F401
    except ImportError as e:
        return f"{e.name} is not installed"
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="flyswat-native-") as tmp:
        work = Path(tmp)
        (work / "setup.py").write_text(_SETUP)
        staged = work / "out"
        # The project's own mypy settings are for its checks (uv run mypy), with every
        # dependency installed; a build may have none of them (an isolated build): their
        # types are Any here, and what that makes mypy say of the modules not compiled is
        # not this build's business.
        (work / "mypy.ini").write_text("[mypy]\n")
        args = [f"--config-file={work / 'mypy.ini'}", "--ignore-missing-imports",
                "--follow-imports=silent", f"--cache-dir={work / 'mypy'}", *MODULES]  # fmt: skip
        done = subprocess.run(
            [sys.executable, str(work / "setup.py"), str(work / "c"), "\n".join(args), "build_ext",
             "--build-lib", str(staged), "--build-temp", str(work / "o")],
            cwd=src, capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode:
            return "mypyc failed:\n" + (done.stdout + done.stderr)[-4000:]
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        files = {p.relative_to(staged).as_posix() for p in staged.rglob(f"*{suffix}")}
        lib = next((f for f in files if "/" not in f and "__mypyc" in f), None)
        modules = {m[: -len(".py")]: m for m in MODULES}
        missing = [stem + suffix for stem in modules if stem + suffix not in files]
        if missing or lib is None:
            return f"mypyc made no {', '.join(missing) or 'shared library'}"
        manifest = {
            "suffix": suffix,
            "lib": lib.split(".")[0],
            "modules": {
                stem.replace("/", "."): {"file": stem + suffix, "sha256": digest(src / path)}
                for stem, path in modules.items()
            },
        }
        (staged / MANIFEST).write_text(json.dumps(manifest, indent=1))
        shutil.rmtree(out, ignore_errors=True)  # a loaded extension stays mapped: safe
        shutil.copytree(staged, out)
    return None


try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run as a script, outside a build
    BuildHookInterface = object


class NativeHook(BuildHookInterface):  # type: ignore[misc]
    """Hatchling's build hook: compile, and put the extensions where the install finds them."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or os.environ.get("FLYSWAT_NATIVE") == "0":
            return
        root = Path(self.root)
        out = root / "build" / "native"
        why = build(root / "src", out)
        if why is not None:
            print(f"flyswat: the hot path stays interpreted: {why}", file=sys.stderr)
            return
        if version == "editable":
            return  # flyswat.native loads them from build/native while the sources match
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        for path in out.rglob(f"*{sysconfig.get_config_var('EXT_SUFFIX')}"):
            build_data["force_include"][str(path)] = path.relative_to(out).as_posix()


if __name__ == "__main__":
    reason = build(ROOT / "src", ROOT / "build" / "native")
    if reason is not None:
        raise SystemExit(f"flyswat: not compiled: {reason}")
    print(f"flyswat: {len(MODULES)} modules compiled into {ROOT / 'build' / 'native'}")
