"""The crates of a Rust project and which depend on which, read from its Cargo.toml files as
they are in the tree (tomllib, never cargo: `impacted` runs outside the sandbox, and cargo there
would follow what the agent wrote, `rust-toolchain.toml`'s toolchain `path` included).

A crate depends on another when one of its dependency tables (`dependencies`,
`dev-dependencies`, `build-dependencies`, and their `target.<cfg>.` forms) names the other's
folder by `path`, directly or through `workspace = true` and `[workspace.dependencies]`."""

from __future__ import annotations

import posixpath
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepswitch.util.toml import parse_toml

MANIFEST = "Cargo.toml"
_DEPENDENCY_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


@dataclass(frozen=True)
class Crate:
    name: str  # as `cargo test -p NAME` takes it
    folder: str  # relative to the root, posix; "" for the root's own package
    depends_on: frozenset[str]  # the folders of the crates it depends on by path


@dataclass(frozen=True)
class Project:
    crates: tuple[Crate, ...]
    workspace: bool  # the root manifest has a [workspace] table

    def owner(self, path: str) -> Crate | None:
        """The crate whose folder holds `path` (the deepest one), or None."""
        found: Crate | None = None
        for crate in self.crates:
            inside = not crate.folder or path.startswith(crate.folder + "/")
            if inside and (found is None or len(crate.folder) > len(found.folder)):
                found = crate
        return found

    def dependents(self, folders: set[str]) -> set[str]:
        """`folders` and the folders of every crate that depends on one of them, transitively."""
        reached = set(folders)
        grew = True
        while grew:
            grew = False
            for crate in self.crates:
                if crate.folder not in reached and crate.depends_on & reached:
                    reached.add(crate.folder)
                    grew = True
        return reached


def read_manifest(path: Path) -> dict[str, Any]:
    """A Cargo.toml as a dict; {} when it is missing or does not parse (cargo will say why)."""
    try:
        return parse_toml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _normal(path: str) -> str | None:
    """A relative path normalised ("crates/app/../core" -> "crates/core", "." -> ""); None when
    it leaves the root."""
    text = posixpath.normpath(path)
    if text == ".":
        return ""
    if text == ".." or text.startswith(("../", "/")):
        return None
    return text


def _member_folders(root: Path, workspace: dict[str, Any]) -> list[str]:
    members = workspace.get("members", [])
    excluded = workspace.get("exclude", [])
    folders: list[str] = []
    for pattern in members if isinstance(members, list) else []:
        if not isinstance(pattern, str):
            continue
        globbed = any(c in pattern for c in "*?[")
        for found in sorted(root.glob(pattern)) if globbed else [root / pattern]:
            rel = _normal(found.relative_to(root).as_posix())
            if rel and (found / MANIFEST).is_file() and rel not in excluded:
                folders.append(rel)
    return folders


def _path_dependencies(
    manifest: dict[str, Any], folder: str, shared: dict[str, str]
) -> frozenset[str]:
    """The folders (relative to the root) this manifest's dependencies name by path."""
    tables: list[object] = [manifest.get(t) for t in _DEPENDENCY_TABLES]
    target = manifest.get("target")
    for cfg in target.values() if isinstance(target, dict) else []:
        if isinstance(cfg, dict):
            tables += [cfg.get(t) for t in _DEPENDENCY_TABLES]
    found: set[str] = set()
    for table in tables:
        for name, spec in table.items() if isinstance(table, dict) else []:
            if not isinstance(spec, dict):
                continue
            if spec.get("workspace") is True and name in shared:
                found.add(shared[name])
            elif isinstance(spec.get("path"), str):
                rel = _normal(posixpath.join(folder, spec["path"]))
                if rel is not None:
                    found.add(rel)
    return frozenset(found)


def _shared_dependencies(workspace: dict[str, Any]) -> dict[str, str]:
    """[workspace.dependencies] given by path: dependency name -> folder."""
    table = workspace.get("dependencies")
    out: dict[str, str] = {}
    for name, spec in table.items() if isinstance(table, dict) else []:
        if isinstance(spec, dict) and isinstance(spec.get("path"), str):
            rel = _normal(spec["path"])
            if rel is not None:
                out[name] = rel
    return out


def read_project(root: Path) -> Project:
    """The root's package and its workspace members, each with the crates it depends on."""
    top = read_manifest(root / MANIFEST)
    workspace = top.get("workspace")
    workspace = workspace if isinstance(workspace, dict) else None
    folders = [""] if isinstance(top.get("package"), dict) else []
    shared: dict[str, str] = {}
    if workspace is not None:
        folders += [f for f in _member_folders(root, workspace) if f not in folders]
        shared = _shared_dependencies(workspace)
    crates: list[Crate] = []
    for folder in folders:
        manifest = top if not folder else read_manifest(root / folder / MANIFEST)
        package = manifest.get("package")
        name = package.get("name") if isinstance(package, dict) else None
        if isinstance(name, str) and name:
            crates.append(Crate(name, folder, _path_dependencies(manifest, folder, shared)))
    return Project(tuple(crates), workspace is not None)
