"""The compiled hot path (hatch_build.py, flyswat.native): used only while its sources are the
ones compiled; CI runs the whole suite on it."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import hatch_build
import pytest

from flyswat import native
from flyswat.server import frames
from flyswat.wire import Deltas

SUFFIX = str(sysconfig.get_config_var("EXT_SUFFIX"))


def _manifest(digests: dict[str, str], suffix: str = SUFFIX) -> dict[str, object]:
    return {
        "suffix": suffix,
        "lib": "abc__mypyc",
        "modules": {
            m: {"file": m.replace(".", "/") + suffix, "sha256": d} for m, d in digests.items()
        },
    }


def test_a_build_is_used_only_when_every_source_is_the_one_compiled() -> None:
    built = {"flyswat.wire": "aa", "flyswat.table.core": "bb"}
    assert native.check(_manifest(built), built, SUFFIX) is None
    why = native.check(_manifest(built), {**built, "flyswat.table.core": "cc"}, SUFFIX)
    assert why is not None and "flyswat.table.core" in why and "flyswat.wire" not in why
    missing = native.check(_manifest(built), {"flyswat.wire": "aa"}, SUFFIX)
    assert missing is not None and "flyswat.table.core" in missing


def test_a_build_for_another_interpreter_or_an_empty_one_is_not_used() -> None:
    built = {"flyswat.wire": "aa"}
    other = native.check(_manifest(built, ".cpython-312-x86_64-linux-gnu.so"), built, SUFFIX)
    assert other is not None and "cpython-312" in other
    assert native.check({"suffix": SUFFIX, "lib": "x", "modules": {}}, {}, SUFFIX) is not None


def test_an_edited_source_runs_interpreted_and_says_why(tmp_path: Path) -> None:
    src, build = tmp_path / "src", tmp_path / "build"
    (src / "flyswat").mkdir(parents=True)
    (src / "flyswat" / "wire.py").write_text("X = 1\n")
    build.mkdir()
    (build / "manifest.json").write_text(json.dumps(_manifest({"flyswat.wire": "0" * 64})))
    before = list(sys.meta_path)
    state = native.install(build, src)
    assert sys.meta_path == before
    assert not state.compiled and "flyswat.wire" in state.why and "hatch_build.py" in state.why
    assert not native.install(tmp_path / "nowhere", src).compiled


def test_flyswat_native_0_runs_everything_interpreted() -> None:
    code = "import flyswat.table.core as c, flyswat.native as n; print(n.STATE.how, c.__file__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "FLYSWAT_NATIVE": "0"}).stdout.split()  # fmt: skip
    assert out[0] == "interpreted" and out[1].endswith("core.py")


@pytest.mark.skipif(
    os.environ.get("FLYSWAT_REQUIRE_NATIVE") != "1",
    reason="CI (.ci/run) requires the compiled hot path; a checkout may be edited since its build",
)
def test_ci_runs_the_suite_on_the_compiled_hot_path() -> None:
    assert native.STATE.how == "compiled", native.STATE.why
    listed = {m.removesuffix(".py").replace("/", ".") for m in hatch_build.MODULES}
    assert listed == set(native.STATE.modules)
    import flyswat.server.connection
    import flyswat.table.core

    for module in (flyswat.table.core, flyswat.server.connection):
        assert module.__file__ is not None and module.__file__.endswith(SUFFIX)


def _blocks_kept(make: Callable[[], object], times: int = 20_000) -> int:
    """Memory blocks still held after ``make()`` ran ``times`` times, its results dropped."""
    make()  # warm: caches and interned objects made once
    gc.collect()
    before = sys.getallocatedblocks()
    for _ in range(times):
        make()
    gc.collect()
    return sys.getallocatedblocks() - before


def test_the_frames_and_messages_a_server_writes_keep_no_memory() -> None:
    """Compiled by mypyc, ``a + b`` of two bytes leaked a block each time: every frame
    written (``frames.frame``) and every message with a seat's own part (``wire.Deltas``)
    stayed in memory, 2,600 blocks for each table's game (docs/BENCHMARKS.md). Whichever way
    the modules run, making them must keep nothing."""
    payload = b'{"type":"ping","id":1}'
    assert _blocks_kept(lambda: frames.text_frame(payload)) < 500
    assert _blocks_kept(lambda: frames.frame(frames.TEXT, payload * 10)) < 500
    assert _blocks_kept(lambda: frames.close_frame(4409, "replaced")) < 500

    def personal() -> object:
        deltas = Deltas()
        return deltas.message({"type": "hands"}, {"turn": 1}, [0, 1], {0: {"mine": [1]}, 1: {}})

    assert _blocks_kept(personal) < 500
