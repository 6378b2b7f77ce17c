"""The optional extras: what a plain install (the server) leaves out, and a clear error when a
command needs it.

``pip install flyswat`` installs the game and the server, on its embedded SQLite store. The
extras add the rest (``pyproject.toml``): ``sim`` (rich, numpy, numba, matplotlib: ``flyswat
simulate``, its ``--fast`` kernel and ``--plot``, the balance study), ``env`` (numpy, numba,
Gymnasium, PettingZoo: :mod:`flyswat.env`), ``postgres`` (psycopg: ``--db postgresql://…``),
``cluster`` (redis: ``--redis``) and ``ray`` (``flyswat simulate --ray``, the balance study on
a cluster). The development group pulls them all, so ``uv run`` has everything.
"""

from __future__ import annotations

import importlib.util

from flyswat.errors import IllegalActionError

#: What each extra provides, by the top-level module that must be importable.
EXTRAS: dict[str, tuple[str, ...]] = {
    "sim": ("rich", "numpy", "numba", "matplotlib"),
    "env": ("numpy", "numba", "gymnasium", "pettingzoo"),
    "postgres": ("psycopg",),
    "cluster": ("redis",),
    "ray": ("ray",),
}


def missing(extra: str, *modules: str) -> list[str]:
    """The modules of ``extra`` (or just ``modules``, if given) that are not installed."""
    return [m for m in modules or EXTRAS[extra] if importlib.util.find_spec(m) is None]


def require(extra: str, what: str, *modules: str) -> None:
    """Raise :class:`IllegalActionError` (``missing_extra``) naming the extra to install when
    ``what`` (a command or feature) needs modules of ``extra`` that are not installed."""
    absent = missing(extra, *modules)
    if absent:
        raise IllegalActionError(
            f"{what} needs {', '.join(absent)}: install the '{extra}' extra "
            f"(pip install 'flyswat[{extra}]', or uv sync in a clone)",
            "missing_extra",
        )
