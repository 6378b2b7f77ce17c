"""The compiled hot path of a checkout: loaded while its sources are the ones compiled.

``uv sync`` compiles the server's hot path with mypyc (``hatch_build.py``, its
:data:`MODULES`) into ``build/native/`` beside ``src``, with a manifest of each source's
SHA-256. At the first import of :mod:`flyswat`, :func:`install` compares them with the files
in ``src``: when every one matches, a finder at the head of ``sys.meta_path`` hands out the
compiled modules; when any differs (a file edited since), none is (they call one another
directly: a mix would run old code), and everything runs as written. A wheel's extensions sit
beside their sources and need none of this.

``FLYSWAT_NATIVE=0`` runs everything interpreted. :data:`STATE` says what was done and why
(``flyswat serve`` logs it; ``/health`` shows it).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

#: A checkout's ``src`` (this file is ``src/flyswat/native.py``) and where its build lives.
SRC = Path(__file__).resolve().parents[1]
BUILD = SRC.parent / "build" / "native"


@dataclass(frozen=True)
class State:
    """Whether the compiled modules are in use: ``how`` is ``compiled`` (a checkout's build),
    ``wheel`` (an installed wheel's), or ``interpreted``; ``why`` says why so."""

    how: str
    why: str
    modules: tuple[str, ...] = ()

    @property
    def compiled(self) -> bool:
        return self.how != "interpreted"


def check(manifest: Mapping[str, Any], digest_of: Mapping[str, str], suffix: str) -> str | None:
    """Why the build ``manifest`` may not be used with sources whose SHA-256 by module is
    ``digest_of`` (None: it may)."""
    if manifest.get("suffix") != suffix:
        return f"built for {manifest.get('suffix')}, this interpreter loads {suffix}"
    modules = manifest.get("modules") or {}
    if not modules or not manifest.get("lib"):
        return "the build's manifest lists nothing"
    changed = sorted(m for m, entry in modules.items() if digest_of.get(m) != entry.get("sha256"))
    if changed:
        return f"changed since the build: {', '.join(changed)} (uv run python hatch_build.py)"
    return None


class _Finder(importlib.abc.MetaPathFinder):
    """Hands out the compiled modules, by name, from the build's files."""

    def __init__(self, files: Mapping[str, Path]) -> None:
        self.files = dict(files)

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        file = self.files.get(name)
        return None if file is None else importlib.util.spec_from_file_location(name, file)


def install(build: Path = BUILD, src: Path = SRC) -> State:
    """Put the finder in place when ``build`` matches ``src``; the resulting :class:`State`."""
    if os.environ.get("FLYSWAT_NATIVE") == "0":
        return State("interpreted", "FLYSWAT_NATIVE=0")
    suffix = str(sysconfig.get_config_var("EXT_SUFFIX"))
    if any(Path(__file__).parent.glob("*" + suffix)):  # a wheel's: beside their sources
        return State("wheel", "installed compiled")
    try:
        manifest = json.loads((build / "manifest.json").read_text())
    except (OSError, ValueError):
        return State("interpreted", f"no build in {build}")
    modules: dict[str, Any] = manifest.get("modules") or {}
    digests = {}
    for name in modules:
        with contextlib.suppress(OSError):  # a source gone: not the one compiled
            source = (src / (name.replace(".", "/") + ".py")).read_bytes()
            digests[name] = hashlib.sha256(source).hexdigest()
    why = check(manifest, digests, suffix)
    if why is not None:
        return State("interpreted", why)
    files = {name: build / entry["file"] for name, entry in modules.items()}
    files[manifest["lib"]] = build / (manifest["lib"] + suffix)
    if any(name in sys.modules for name in modules):
        return State("interpreted", "imported before the build could be put in place")
    sys.meta_path.insert(0, _Finder(files))
    return State("compiled", f"from {build}", tuple(sorted(modules)))


STATE = install()
