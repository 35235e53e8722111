"""Whether the configuration files git reads could name an excludes file, told from their bytes
with no git process (issue 48, docs/decisions/0090-new-paths-asked-of-one-check-ignore.md).

`core.excludesFile` is read from git's system, global and repository configuration, and from
any file those include. When none of those files holds the word `excludesfile` nor `include`
(compared without case, comments too: a mention is enough), no configuration names one, and
the excludes file is git's default. Anything else (a mention, a file that cannot be read) is
for git to answer.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

_MENTIONS = (b"excludesfile", b"include")


def _system_files() -> list[Path]:
    """Where git's own system configuration lives: `/etc/gitconfig` (a distribution's git), or
    `etc/gitconfig` beside the folder of the git on PATH (a git built to another prefix)."""
    found = [Path("/etc/gitconfig")]
    git = shutil.which("git")
    if git is not None:
        for binary in (Path(git), Path(git).resolve()):
            found.append(binary.parent.parent / "etc" / "gitconfig")
    return found


def config_files(git_dir: Path, common_dir: Path) -> list[Path]:
    """The configuration files git reads for the repository (git folder `git_dir`, objects and
    configuration in `common_dir`) with the user's configuration, as far as ssw can name them."""
    home = Path(os.environ.get("HOME") or Path.home())
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    return [
        *_system_files(),
        xdg / "git" / "config",
        home / ".gitconfig",
        common_dir / "config",
        git_dir / "config.worktree",
    ]


def default_excludes_file() -> Path:
    """git's excludes file when no configuration names one."""
    home = Path(os.environ.get("HOME") or Path.home())
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config", "git", "ignore")


def may_name_excludes(files: list[Path]) -> bool:
    """Whether any of `files` could name an excludes file (mentions one, includes another, or
    cannot be read); a file that is not there names nothing."""
    return may_mention(files, _MENTIONS)


def may_mention(files: list[Path], words: tuple[bytes, ...]) -> bool:
    """Whether any of `files` holds one of `words` (lower case; compared without case, comments
    too) or cannot be read; a file that is not there holds nothing."""
    for path in files:
        try:
            data = path.read_bytes().lower()
        except FileNotFoundError:
            continue
        except OSError:
            return True
        if any(word in data for word in words):
            return True
    return False
