"""The environment and HOME of what runs in the sandbox: an allow-list of the caller's variables
(`child_env`), never one that looks secret unless named, and a scratch HOME removed afterwards
(`sandbox_home`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from stepswitch.util.scratch import HOME_PREFIX, owned_scratch
from stepswitch.util.secrets import looks_secret

_ALLOWED_NAMES = frozenset(
    {
        "PATH", "LANG", "LANGUAGE", "TERM", "TZ", "VIRTUAL_ENV", "USER", "LOGNAME", "SHELL",
        "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CI", "SOURCE_DATE_EPOCH",
    }
)  # fmt: skip
_ALLOWED_PREFIXES = ("LC_", "PYTHON", "PYTEST_")
_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


def child_env(
    base: Mapping[str, str], home: Path, extra_allowed: Iterable[str] = ()
) -> dict[str, str]:
    """An allow-listed environment: names a build or a test suite needs, never one that looks
    secret unless `extra_allowed` names it; HOME and TMPDIR point into the scratch home."""
    extra = {name.upper() for name in extra_allowed}
    env = {}
    for name, value in base.items():
        upper = name.upper()
        allowed = upper in _ALLOWED_NAMES or upper.startswith(_ALLOWED_PREFIXES)
        if upper in extra or (allowed and not looks_secret(name, value)):
            env[name] = value
    env.setdefault("PATH", _DEFAULT_PATH)
    env["HOME"] = str(home)
    env["TMPDIR"] = str(home / "tmp")
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # bytecode written by the tests is not part of a change
    return env


@contextlib.contextmanager
def sandbox_home() -> Iterator[Path]:
    """A scratch HOME (with tmp/ for TMPDIR), removed afterwards; its owner lock lets
    `ssw runs clean` remove it once this process is gone (util/scratch.py)."""
    with owned_scratch(HOME_PREFIX) as home:
        (home / "tmp").mkdir()
        yield home
