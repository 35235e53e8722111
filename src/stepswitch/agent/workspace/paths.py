"""The worktree a model's tools act on: path resolution, write protection, a clean environment."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from stepswitch.util.env import clean_env
from stepswitch.util.globs import glob_regex
from stepswitch.util.sandbox import Confinement

# Prefixes models carry over from container-based benchmarks: they all mean "the repository root".
CONTAINER_ROOTS = frozenset({"repo", "workspace", "testbed", "app", "code"})

# Writes into git's own data would corrupt the worktree, whatever the configured patterns say.
ALWAYS_PROTECTED = (".git",)


PATH_FIX = "paths must be inside the repository; use a path relative to its root, e.g. src/x.py"


def _folded(names: list[str], *, absolute: bool) -> list[str] | None:
    """names without "." and empty ones, each ".." taking out the name before it; None when a
    relative path climbs above its start ("/.." is "/", as the OS has it)."""
    folded: list[str] = []
    for name in names:
        if name == "..":
            if not folded and not absolute:
                return None
            if folded:
                folded.pop()
        elif name not in ("", "."):
            folded.append(name)
    return folded


class PathRefused(Exception):
    """A model's path leads outside the worktree; the message names the fix for the model."""

    def __init__(self, path: str, why: str = "is outside the repository") -> None:
        self.path = path
        super().__init__(f"Path {path!r} {why}: {PATH_FIX}.")


@dataclass(frozen=True)
class Workspace:
    root: Path  # the repository worktree; stored resolved so containment checks compare real paths
    protected: tuple[str, ...] = ()  # globs relative to root that writes must refuse
    command_timeout_s: float = 120
    output_cap_chars: int = 16000
    secret_env_names: frozenset[str] = field(default_factory=frozenset)
    # The run's sandbox; None: commands run unconfined (tests of the tools).
    confinement: Confinement | None = None
    # The environment commands get; None: the user's, without secrets (command_env).
    env: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).expanduser().resolve())

    def lexical(self, path: str) -> str:
        """The root-relative posix path ("." for the root) a model's path names, worked out from
        its text: nothing below the root is looked at, so a folder swapped for a link meanwhile
        cannot change the answer (the file tools then open it with safe_fs, refusing links).
        Raises PathRefused for a path outside root."""
        raw = path.strip() or "."
        if "\0" in raw:  # the OS would raise ValueError, which is no refusal
            raise PathRefused(path, "contains a NUL character")
        absolute = raw.startswith("/")
        names = _folded(raw.split("/"), absolute=absolute)
        if names is None:
            raise PathRefused(path)
        if absolute:
            names = self._below_root(path, names)
        return "/".join(names) or "."

    def _below_root(self, path: str, names: list[str]) -> list[str]:
        """The names of an absolute path below root: under it as written, under a name of it
        that links lead to (checked shortest first, so no link inside root is followed), or
        under a container prefix such as /repo."""
        root = list(self.root.parts[1:])
        if names[: len(root)] == root:
            return names[len(root) :]
        for depth in range(len(names) + 1):
            try:
                real = Path("/", *names[:depth]).resolve()
            except (OSError, RuntimeError):  # a loop of links (RuntimeError before Python 3.13)
                break
            if real.is_relative_to(self.root):
                return [*real.relative_to(self.root).parts, *names[depth:]]
        if names and names[0] in CONTAINER_ROOTS:
            return names[1:]
        raise PathRefused(path)

    def resolve(self, path: str) -> Path:
        """The real path inside root a model's path names, following links: for run's leading
        cd, whose folder a process enters by name anyway. The file tools use lexical instead.
        Raises PathRefused for anything outside root."""
        rel = self.lexical(path)
        try:
            target = (self.root / rel).resolve()
        except (OSError, RuntimeError):
            raise PathRefused(path, "leads through a loop of symbolic links") from None
        if not target.is_relative_to(self.root):
            raise PathRefused(path, "leads outside the repository through a symbolic link")
        return target

    def relative(self, real: Path) -> str:
        """A resolved path inside root as the posix path models and records use ("." for root)."""
        return real.relative_to(self.root).as_posix() or "."

    def protected_by(self, path: str | Path) -> str | None:
        """The pattern that forbids writing `path` (a model's path or one under root), if any.
        Worked out from the path's text, so a folder that changes under it cannot make it raise;
        the file tools refuse links, so the text names the file they write."""
        rel = self.lexical(str(path))
        # A pattern that names a folder protects everything under it.
        candidates = [rel, *(p.as_posix() for p in PurePosixPath(rel).parents if str(p) != ".")]
        for pattern in (*ALWAYS_PROTECTED, *self.protected):
            anchored = pattern.strip().removeprefix("./").strip("/")
            regex = glob_regex(anchored)
            if any(regex.match(c) for c in candidates):
                return pattern
        return None

    def is_protected(self, path: str | Path) -> bool:
        return self.protected_by(path) is not None

    def command_env(self) -> dict[str, str]:
        """The environment a command gets: the run's allow-listed one when given, else
        os.environ without API keys, tokens, passwords and the configured secret names."""
        if self.env is not None:
            return dict(self.env)
        return clean_env(self.secret_env_names)

    def command(self, argv: list[str], cwd: Path) -> list[str]:
        """argv as it must be started: inside the run's sandbox when there is one."""
        return self.confinement.wrap(argv, cwd) if self.confinement else argv
