"""Where the registration log starts (issue 44, ADR 0078): claims/log_start.yaml names the commit
its chain starts at, written once by the first `ssw claims register` and never moved. The check
compares every committed version of the log from that commit on with the log today, so a
version rewritten in the old one-registration-per-claim form cannot end the comparison early,
and a history that does not reach that commit (a shallow clone) is refused, never passed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from stepswitch.claims.git_view import GitView
from stepswitch.errors import ConfigError, UsageError

ANCHOR_FILE = "claims/log_start.yaml"
HEADER = (
    "# The commit the registration log (claims/registrations.yaml) starts at: written by the\n"
    "# first `ssw claims register`, never moved. ssw prove compares every committed version of\n"
    "# the log from this commit on with the log today.\n"
    "# docs/decisions/0078-an-anchored-log-and-commits-that-landed.md\n"
)
DEEPEN = "git fetch --unshallow"


class LogStart(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    commit: Annotated[str, Field(pattern=r"^[0-9a-f]{40}$", strict=True)]


class ShallowHistory(UsageError):
    """The clone's history does not reach the commit the log starts at (exit 2)."""


@dataclass(frozen=True)
class Anchor:
    """What the check may compare: the commit to walk the log's versions from (None: all of
    them), what is wrong with the anchor itself, and what could not be checked at all."""

    since: str | None
    problems: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()


def load_anchor(root: Path) -> str | None:
    """The commit claims/log_start.yaml names; None when there is no such file."""
    from stepswitch.claims.yamlio import parse_yaml
    from stepswitch.util.inputs import read_text_input

    path = root / ANCHOR_FILE
    if not path.exists():
        return None
    text = read_text_input(path, "log start file", f"restore {ANCHOR_FILE} from git")
    return _parsed(parse_yaml(text, ANCHOR_FILE))


def _parsed(raw: object) -> str:
    from stepswitch.util.config_model import validate

    fix = f"restore {ANCHOR_FILE} from git"
    return validate(LogStart, raw, ANCHOR_FILE, fix=fix).commit


def write_anchor(root: Path, commit: str) -> None:
    from stepswitch.claims.yamlio import dump_yaml

    path = root / ANCHOR_FILE
    path.write_text(HEADER + dump_yaml({"commit": commit}), encoding="utf-8", newline="\n")


def anchor(root: Path, git: GitView, logged: bool, allow_shallow: bool = False) -> Anchor:
    """Where the comparison of the log with git starts. A clone whose history does not reach
    the log's start is a ShallowHistory (exit 2) unless `allow_shallow`: then the comparison
    is skipped and said to be (`unchecked`), as it is in a copy without git. `logged`: the log
    holds an entry (an anchor is then required)."""
    from stepswitch.claims.registration import REGISTRATIONS_FILE

    if not git.is_git():
        # A copy, not a clone: it pretends to no history, and the output says none was checked.
        return Anchor(None, (), (f"{REGISTRATIONS_FILE} against git: this is no git checkout",))
    start = load_anchor(root)
    if start is None:
        if not logged:
            return Anchor(None)
        return Anchor(
            None,
            (
                f"{ANCHOR_FILE} does not exist: the log's start cannot be told, so a version of "
                f"{REGISTRATIONS_FILE} rewritten in the old form would end the comparison "
                "early; restore it from git, or write the commit the log's first entry was made "
                "at (docs/decisions/0078-an-anchored-log-and-commits-that-landed.md)",
            ),
        )
    found = git.in_history(start)
    if found is None:  # a shallow clone without the commit
        why = (
            f"this clone's history is shallow and does not reach commit {start[:12]}, where "
            f"{REGISTRATIONS_FILE} starts ({ANCHOR_FILE})"
        )
        if allow_shallow:
            return Anchor(None, (), (f"{REGISTRATIONS_FILE} against git: {why} ({DEEPEN})",))
        raise ShallowHistory(f"{why}: fetch deeper ({DEEPEN}), then run ssw prove again")
    problems = [*_moved(git, start)]
    if found is False:
        problems.append(
            f"{ANCHOR_FILE} names commit {start[:12]}, which is not in this history: the log's "
            "start was cut or rewritten"
        )
        return Anchor(None, tuple(problems))
    return Anchor(start, tuple(problems))


def _moved(git: GitView, start: str) -> list[str]:
    """Every committed version of the anchor file names the same commit: it never moves."""
    from stepswitch.claims.yamlio import parse_yaml

    found = []
    for commit, text in git.versions(ANCHOR_FILE):
        try:
            named = _parsed(parse_yaml(text, ANCHOR_FILE))
        except ConfigError:
            named = "(unreadable)"
        if named != start:
            found.append(
                f"{ANCHOR_FILE} named commit {named[:12]} at commit {commit[:12]}, not "
                f"{start[:12]}: the log's start never moves"
            )
    return found
