"""What a Node package declares in its `package.json`, as the Node gates read it: its scripts,
its dependencies, its package manager (from the lockfile), and how a script is run with more
arguments through that package manager."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

MANIFEST = "package.json"
PackageManager = Literal["npm", "pnpm", "yarn"]
# lockfile -> the package manager that writes it, in the order they are looked for
LOCKFILES: tuple[tuple[str, PackageManager], ...] = (
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
    ("package-lock.json", "npm"),
    ("npm-shrinkwrap.json", "npm"),
)
# Shell syntax that makes a command more than one program with its arguments.
_COMPOUND = re.compile(r"&&|\|\||[;|`<>]|\$\(")
# `npm test`, `npm run lint`, `pnpm run test`, `yarn test`: (manager, script)
RUNS_SCRIPT = re.compile(
    r"^(?P<pm>npm|pnpm|yarn)\s+(?:(?:run|run-script)\s+(?P<named>[\w:.-]+)|(?P<short>test|t))\s*"
)


class ManifestUnreadable(Exception):
    """package.json is not a JSON object: the message says why."""


@dataclass(frozen=True)
class NodeProject:
    """The parts of a package.json the gates use."""

    root: Path
    scripts: dict[str, str]
    dependencies: frozenset[str]  # dependencies and devDependencies, by name
    manager: PackageManager
    manager_why: str  # "package-lock.json", "pnpm-lock.yaml", "no lockfile: npm"

    @classmethod
    def read(cls, root: Path) -> NodeProject | None:
        """The package at `root`; None without a package.json. Raises ManifestUnreadable."""
        path = root / MANIFEST
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ManifestUnreadable(f"{MANIFEST} cannot be read: {exc}") from exc
        if not isinstance(data, dict):
            raise ManifestUnreadable(f"{MANIFEST} is not a JSON object")
        raw = data.get("scripts")
        scripts = (
            {k: v for k, v in raw.items() if isinstance(v, str)} if isinstance(raw, dict) else {}
        )
        names: set[str] = set()
        for key in ("dependencies", "devDependencies"):
            table = data.get(key)
            names |= set(table) if isinstance(table, dict) else set()
        manager, why = _manager(root, data)
        return cls(root, scripts, frozenset(names), manager, why)

    def run(self, script: str) -> str:
        """The command that runs `script` through the package manager."""
        return f"{self.manager} test" if script == "test" else f"{self.manager} run {script}"

    def script_of(self, command: str) -> str | None:
        """The script's text a `run` command runs; None for a command that runs no script."""
        found = RUNS_SCRIPT.match(command.strip())
        if found is None or found["pm"] != self.manager:
            return None
        return self.scripts.get(found["named"] or "test")

    def installed(self, tool: str) -> bool:
        """Whether node_modules/.bin holds `tool` (the user installs it; ssw installs nothing)."""
        return self.bin(tool) is not None

    def bin(self, tool: str) -> str | None:
        """`tool` in the package's node_modules/.bin as a command: relative to the root; for a
        run's worktree, which git leaves without node_modules, the user's checkout's own (the
        sandbox shows it read-only, and node and npm find it there as they walk up). None when
        neither has it."""
        if (self.root / "node_modules" / ".bin" / tool).exists():
            return f"node_modules/.bin/{tool}"
        lent = lent_node_modules(self.root)
        if lent is not None and (lent / ".bin" / tool).exists():
            return str(lent / ".bin" / tool)
        return None


def lent_node_modules(root: Path) -> Path | None:
    """The user's checkout's node_modules that a run's worktree at `root` (<checkout>/.ssw/
    worktrees/<id>) uses, as node and npm find it walking up from there; None elsewhere."""
    if root.parent.name != "worktrees" or root.parent.parent.name != ".ssw":
        return None
    found = root.parent.parent.parent / "node_modules"
    return found if found.is_dir() else None


def _manager(root: Path, data: dict[str, object]) -> tuple[PackageManager, str]:
    for lockfile, manager in LOCKFILES:
        if (root / lockfile).is_file():
            return manager, lockfile
    declared = data.get("packageManager")
    if isinstance(declared, str):
        name = declared.split("@", 1)[0]
        managers: dict[str, PackageManager] = {"npm": "npm", "pnpm": "pnpm", "yarn": "yarn"}
        if name in managers:
            return managers[name], f"packageManager {declared}"
    return "npm", "no lockfile"


def with_args(command: str, args: str) -> str:
    """`command` with `args` added to the program it runs: after `--` for `npm test` or
    `npm run X` (npm keeps the rest for itself otherwise), else at the end. A compound command
    (`a && b`) is returned as it is: no reporter can be added to it."""
    if is_compound(command):
        return command
    stripped = command.strip()
    if stripped.startswith("npm ") and RUNS_SCRIPT.match(stripped) and " -- " not in stripped:
        return f"{stripped} -- {args}"
    return f"{stripped} {args}"


def is_compound(command: str) -> bool:
    return _COMPOUND.search(command) is not None


def words(command: str) -> list[str] | None:
    """The words of a simple command; None for shell syntax this does not read."""
    if is_compound(command):
        return None
    try:
        return shlex.split(command)
    except ValueError:
        return None
