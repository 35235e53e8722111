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
    # The run's sandbox; None: commands run unconfined (tests of the tools, `ssw gates`).
    confinement: Confinement | None = None
    # The environment commands get; None: the user's, without secrets (command_env).
    env: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).expanduser().resolve())

    def resolve(self, path: str) -> Path:
        """The real path inside root a model's path names; raises PathRefused for anything else."""
        raw = path.strip() or "."
        if "\0" in raw:  # the OS would raise ValueError, which is no refusal
            raise PathRefused(path, "contains a NUL character")
        given = Path(raw)
        if given.is_absolute():
            given = self._from_absolute(raw, given)
        target = (self.root / given).resolve()
        if not target.is_relative_to(self.root):
            why = "is outside the repository"
            if (self.root / given).is_symlink() or any(
                p.is_symlink() for p in (self.root / given).parents if p.is_relative_to(self.root)
            ):
                why = "leads outside the repository through a symbolic link"
            raise PathRefused(path, why)
        return target

    def _from_absolute(self, raw: str, given: Path) -> Path:
        if given.resolve().is_relative_to(self.root) or given.is_relative_to(self.root):
            return given
        parts = given.parts  # ("/", "repo", "src", "x.py")
        if len(parts) >= 2 and parts[1] in CONTAINER_ROOTS:
            return Path(*parts[2:]) if len(parts) > 2 else Path(".")
        raise PathRefused(raw)

    def relative(self, real: Path) -> str:
        """A resolved path inside root as the posix path models and records use ("." for root)."""
        return real.relative_to(self.root).as_posix() or "."

    def protected_by(self, path: str | Path) -> str | None:
        """The pattern that forbids writing `path` (a model path or a resolved one), if any."""
        real = path if isinstance(path, Path) and path.is_absolute() else self.resolve(str(path))
        rel = self.relative(real.resolve())
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
