"""Dependencies point one way: cli -> (bench, claims, site, demo) -> (agent, sim) -> (policy, gates,
ledger, wire, fakes) -> (registry, records, steps, util, errors). Nothing imports what is above."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "stepswitch"

LAYER = {
    "errors": 0, "steps": 0, "util": 0, "__init__": 0,
    "registry": 1, "records": 1,
    "policy": 2, "gates": 2, "ledger": 2, "wire": 2, "fakes": 2,
    "agent": 3, "sim": 3,
    "bench": 4, "claims": 4, "site": 4, "demo": 4,
    "cli": 5, "__main__": 6,
}  # fmt: skip


def _package(path: Path) -> str:
    return path.relative_to(SRC).parts[0].removesuffix(".py")


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        found += [(node.lineno, n) for n in names if n.startswith("stepswitch.")]
    return found


def test_no_module_imports_a_layer_above_its_own():
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        if "demo/sample" in path.as_posix():
            continue  # the demo's sample project is data
        mine = _package(path)
        for line, name in _imports(path):
            theirs = name.split(".")[1]
            if LAYER[theirs] > LAYER[mine]:
                wrong.append(f"{path.relative_to(SRC)}:{line} imports {name}")
    assert wrong == []


def test_every_package_has_a_layer():
    assert {_package(p) for p in SRC.rglob("*.py")} <= set(LAYER)
