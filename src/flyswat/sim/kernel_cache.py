"""numba's cache of the fast kernels, never older than their sources.

numba keeps each compiled function (``cache=True``) in ``__pycache__`` beside its file and
checks only that file's time and size: a kernel that inlined a function of another file
(``inline="always"``: the policy, the random draws) is loaded from the cache unchanged when
that other file changes, and plays by the old code. :func:`keep_fresh` keeps a digest of
every source of the package beside the cache and empties the cache when it differs: after
a change anywhere in the package, every kernel compiles again once. It needs no numba.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

#: The fast simulator's package: every kernel and everything they inline.
FAST = Path(__file__).parent / "fast"
STAMP = "numba-sources.sha256"


def digest(folder: Path) -> str:
    """One digest of the folder's Python sources, names and contents."""
    h = hashlib.sha256()
    for source in sorted(folder.glob("*.py")):
        h.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return h.hexdigest()


def keep_fresh(folder: Path = FAST) -> bool:
    """Empty the folder's numba cache if it was compiled from other sources than the
    folder's now; True if it did. A folder that cannot be written (an install read-only to
    this user) is left as it is: numba keeps its cache elsewhere then."""
    cache = folder / "__pycache__"
    stamp = cache / STAMP
    now = digest(folder)
    try:
        if stamp.read_text() == now:
            return False
    except OSError:
        pass
    try:
        cache.mkdir(exist_ok=True)
        with open(cache / "numba-sources.lock", "w") as lock:
            _lock(lock.fileno())
            try:  # another process may have done it while this one waited
                if stamp.read_text() == now:
                    return False
            except OSError:
                pass
            for compiled in (*cache.glob("*.nbi"), *cache.glob("*.nbc")):
                compiled.unlink(missing_ok=True)
            fresh = cache / f"{STAMP}.{os.getpid()}"
            fresh.write_text(now)
            fresh.replace(stamp)
    except OSError:
        return False
    return True


def _lock(fd: int) -> None:
    """Hold an exclusive lock on ``fd`` until it is closed (POSIX; elsewhere, none)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
