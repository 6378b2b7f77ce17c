"""numba's cache of the fast kernels is emptied when any source of the package changes
(``flyswat.sim.kernel_cache``): a kernel inlines other files' functions, and numba checks
only its own file, so a cache older than a changed policy played by the old policy."""

from __future__ import annotations

from pathlib import Path

from flyswat.sim.kernel_cache import FAST, STAMP, digest, keep_fresh


def _package(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "fast"
    (folder / "__pycache__").mkdir(parents=True)
    (folder / "kernel.py").write_text("from policy import hand\n")
    (folder / "policy.py").write_text("def hand(): return 1\n")
    return folder, folder / "__pycache__"


def _compile(cache: Path) -> list[Path]:
    made = [cache / "kernel.play-10.py311.nbi", cache / "kernel.play-10.py311.1.nbc"]
    for f in made:
        f.write_bytes(b"compiled")
    return made


def test_a_cache_without_a_stamp_is_emptied_once_then_kept(tmp_path: Path) -> None:
    folder, cache = _package(tmp_path)
    _compile(cache)
    assert keep_fresh(folder)
    assert not list(cache.glob("*.nb?"))
    assert (cache / STAMP).read_text() == digest(folder)
    kept = _compile(cache)
    assert not keep_fresh(folder)
    assert all(f.exists() for f in kept)


def test_a_change_in_an_inlined_file_empties_the_kernels_cache(tmp_path: Path) -> None:
    folder, cache = _package(tmp_path)
    keep_fresh(folder)
    made = _compile(cache)
    other = cache / "kernel.cpython-311.pyc"
    other.write_bytes(b"bytecode")
    (folder / "policy.py").write_text("def hand(): return 2\n")  # not the kernel's own file
    assert keep_fresh(folder)
    assert not any(f.exists() for f in made)
    assert other.exists()  # only numba's files go


def test_a_new_source_file_counts_as_a_change(tmp_path: Path) -> None:
    folder, _ = _package(tmp_path)
    keep_fresh(folder)
    before = digest(folder)
    (folder / "rng.py").write_text("")
    assert digest(folder) != before
    assert keep_fresh(folder)


def test_the_shipped_package_is_stamped_once_imported() -> None:
    import flyswat.sim.fast  # noqa: F401

    assert (FAST / "__pycache__" / STAMP).read_text() == digest(FAST)
