"""The house's shape (docs/ARCHITECTURE.md): each part imports only the parts below it."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "flyswat"

#: Each part of the package, and the parts it may import (besides itself and the standard
#: library). A module's part is its first name under ``flyswat`` (``flyswat.table.core``:
#: ``table``); the rules core is one part.
CORE = {"cards", "rules", "engine", "view", "shuffle", "errors"}
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "record": {"core"},
    "arbiter": {"core"},
    "bots": {"core"},
    "protocol": {"core"},
    "players": {"core"},
    "wire": {"core"},
    "bucket": set(),
    "options": set(),
    "native": set(),
    "table": {"core", "record", "arbiter", "bots", "protocol", "wire", "players", "bucket"},
    "fairplay": {"core", "record", "bots"},
    "server": {"core", "record", "arbiter", "bots", "protocol", "wire", "table", "players"}
    | {"bucket", "options", "extras", "fairplay", "native"},
    "client": {"core", "bots", "wire", "env"},
    "extras": {"core"},
    "sim": {"core", "record", "bots", "extras"},
    "env": {"core", "record", "bots", "sim"},
    "cli": {"core", "record", "bots", "server", "sim", "extras"},
    "__init__": {"core", "native"},
    "__main__": {"cli"},
}


def part(module: str) -> str | None:
    """The part of ``flyswat.x.y`` (None for a module outside the package)."""
    names = module.split(".")
    if names[0] != "flyswat":
        return None
    if len(names) == 1:
        return "__init__"
    return "core" if names[1] in CORE else names[1]


def imports(path: Path) -> set[str]:
    """The flyswat modules ``path`` imports, at any depth of the file."""
    module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            if name != "flyswat":  # from flyswat import bots: the module bots, not __init__
                found.add(name)
            found |= {f"{name}.{a.name}" for a in node.names}
    return {m for m in found if m.startswith("flyswat")}


def test_each_part_imports_only_what_lies_below_it() -> None:
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
        mine = part(module.removesuffix(".__init__"))
        assert mine in ALLOWED, f"{module}: part {mine!r} is not in docs/ARCHITECTURE.md"
        for imported in imports(path):
            theirs = part(imported)
            if theirs not in (None, mine) and theirs in ALLOWED and theirs not in ALLOWED[mine]:
                wrong.append(f"{module} imports {imported}")
    assert wrong == []


def test_the_fast_simulator_does_not_import_the_reference_one() -> None:
    # No cycle: the reference's command may hand ``--fast`` on, the kernel needs nothing back
    # (both share flyswat.sim.summary).
    fast = set().union(*(imports(p) for p in (SRC / "sim" / "fast").glob("*.py")))
    assert not any(m.startswith("flyswat.sim.reference") for m in fast)


def test_the_shipped_package_holds_no_measurement_harness() -> None:
    assert not (SRC / "loadtest").exists(), "the harness lives under bench/"


def test_the_bench_harness_imports_no_module_that_imports_it_back() -> None:
    harness = SRC.parents[1] / "bench" / "harness"
    graph: dict[str, set[str]] = {}
    for path in harness.glob("*.py"):
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):  # TYPE_CHECKING ones too
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness."):
                found.add(str(node.module).removeprefix("harness."))
            elif isinstance(node, ast.Import):
                found |= {a.name.removeprefix("harness.") for a in node.names
                          if a.name.startswith("harness.")}  # fmt: skip
        graph[path.stem] = found

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, set()) - seen:
            if nxt == goal or reaches(nxt, goal, seen | {nxt}):
                return True
        return False

    circles = sorted(m for m in graph if reaches(m, m, set()))
    assert circles == [], f"modules of bench/harness in an import circle: {circles}"
