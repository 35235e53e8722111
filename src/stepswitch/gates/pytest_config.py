"""What the project's own pytest configuration says, which file says it, and how pytest is told
to read that file from elsewhere.

pytest takes its configuration from the first of these files at the root that holds some
(`CONFIG_NAMES`): pytest.toml or .pytest.toml ([pytest]; pytest 9), pytest.ini or .pytest.ini
(always, even without a [pytest] section), pyproject.toml ([tool.pytest] or
[tool.pytest.ini_options]), tox.ini ([pytest]), setup.cfg ([tool:pytest]). `choose_config`
finds that file through any reader: a folder, or a base commit's objects (gates.test_config).
`pinned_args` runs pytest on a copy of it kept outside the tree (ADR 0021).

Of the options only `python_files`, `testpaths`, `pythonpath` and `norecursedirs` are read here;
everything else (hooks, plugins, addopts) pytest applies itself, because the impacted stages run
pytest's own collection (see stepswitch/gates/ssw_pytest/ssw_select.py).
"""

from __future__ import annotations

import configparser
import fnmatch
import os
import shlex
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from stepswitch.util.toml import parse_toml

DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
# In the order pytest looks for them in a folder (pytest 9; older ones skip the .toml two).
CONFIG_NAMES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
EMPTY_CONFIG = "pytest.ini"  # what stands for "no configuration": pytest reads it as empty


@dataclass(frozen=True)
class PytestConfig:
    python_files: tuple[str, ...] = DEFAULT_PYTHON_FILES
    testpaths: tuple[str, ...] = ()  # relative posix folders or files; empty: everywhere
    pythonpath: tuple[str, ...] = ()

    def is_test_file(self, rel_path: str) -> bool:
        """Whether pytest collects `rel_path` (relative posix) as a test module."""
        path = PurePosixPath(rel_path)
        if path.suffix != ".py" or path.name in ("conftest.py", "__init__.py"):
            return False
        if self.testpaths and not any(
            rel_path == t or rel_path.startswith(t.rstrip("/") + "/") or t in ("", ".")
            for t in self.testpaths
        ):
            return False
        for pattern in self.python_files:
            target = rel_path if "/" in pattern else path.name
            if fnmatch.fnmatchcase(target, pattern):
                return True
        return False


@dataclass(frozen=True)
class ConfigFile:
    """The file pytest takes its configuration from: its name at the root, its bytes, and its
    pytest options (empty when pytest would refuse the file: pytest then says why itself)."""

    name: str
    data: bytes
    options: Mapping[str, object]


def words(options: Mapping[str, object], key: str) -> tuple[str, ...]:
    """An option pytest splits into words (`args`, `paths`): a TOML list, or an ini string."""
    value = options.get(key)
    if isinstance(value, list):
        return tuple(str(v) for v in value if isinstance(v, str))
    if not isinstance(value, str):
        return ()
    try:
        return tuple(shlex.split(value))
    except ValueError:
        return tuple(value.split())


def from_options(options: Mapping[str, object]) -> PytestConfig:
    files = words(options, "python_files") or DEFAULT_PYTHON_FILES
    testpaths = tuple(
        PurePosixPath(p).as_posix().removeprefix("./").rstrip("/")
        for p in words(options, "testpaths")
    )
    return PytestConfig(files, testpaths, words(options, "pythonpath"))


def _toml(data: bytes) -> dict[str, object] | None:
    try:
        return parse_toml(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None


def _ini(data: bytes) -> configparser.ConfigParser | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(data.decode("utf-8"))
    except (configparser.Error, UnicodeDecodeError):
        return None
    return parser


def _section(parser: configparser.ConfigParser, name: str) -> dict[str, object] | None:
    return dict(parser[name]) if parser.has_section(name) else None


def _pyproject_options(data: bytes) -> dict[str, object] | None:
    document = _toml(data)
    if document is None:
        return {}  # pytest refuses a pyproject.toml that does not parse
    tool = document.get("tool")
    table = tool.get("pytest") if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        return None
    native = {k: v for k, v in table.items() if k != "ini_options"}
    if native:
        return native
    ini = table.get("ini_options")
    return dict(ini) if isinstance(ini, dict) else None


def config_options(name: str, data: bytes) -> dict[str, object] | None:
    """The pytest options of root file `name` holding `data`; None when pytest would pass over
    it (a pyproject.toml, tox.ini or setup.cfg without a pytest section)."""
    if name in ("pytest.toml", ".pytest.toml"):
        table = (_toml(data) or {}).get("pytest")
        return dict(table) if isinstance(table, dict) else {}
    if name == "pyproject.toml":
        return _pyproject_options(data)
    parser = _ini(data)
    if parser is None:
        return {}  # pytest reads it, and refuses it
    if name in ("pytest.ini", ".pytest.ini"):
        return _section(parser, "pytest") or {}
    if name == "tox.ini":
        return _section(parser, "pytest")
    if name == "setup.cfg":
        found = _section(parser, "tool:pytest")
        # A [pytest] section in setup.cfg is an error pytest reports once it has chosen the file.
        return found if found is not None or not parser.has_section("pytest") else {}
    return None


def choose_config(read: Callable[[str], bytes | None]) -> ConfigFile | None:
    """The file pytest would take its configuration from, given `read` (a root file's name ->
    its bytes, None when there is none); None when no file holds any."""
    for name in CONFIG_NAMES:
        data = read(name)
        if data is None:
            continue
        options = config_options(name, data)
        if options is not None:
            return ConfigFile(name, data, options)
    return None


def folder_reader(root: Path) -> Callable[[str], bytes | None]:
    def read(name: str) -> bytes | None:
        path = root / name
        try:
            return path.read_bytes() if path.is_file() else None
        except OSError:
            return None

    return read


def read_pytest_config(root: Path) -> PytestConfig:
    """The repository's pytest configuration as pytest would find it at its root (defaults when
    it has none or the file does not parse: the full suite then decides)."""
    chosen = choose_config(folder_reader(root))
    return from_options(chosen.options) if chosen is not None else PytestConfig()


def write_config(chosen: ConfigFile | None, folder: Path) -> Path:
    """A copy of `chosen` in `folder` under its own name (pytest parses a file by its name), or an
    empty pytest.ini for no configuration; the path written."""
    folder.mkdir(parents=True, exist_ok=True)
    name, data = (chosen.name, chosen.data) if chosen is not None else (EMPTY_CONFIG, b"")
    target = folder / name
    if not (target.is_file() and not target.is_symlink() and target.read_bytes() == data):
        scratch = folder / f".{name}.{os.getpid()}.tmp"
        scratch.write_bytes(data)
        os.replace(scratch, target)  # whole or not at all, for a concurrent reader
    return target


def pinned_args(config: Path, root: Path, chosen: ConfigFile | None) -> list[str]:
    """pytest's arguments to take its configuration from `config` alone, as if that file stood at
    `root`: root as rootdir and confcutdir (pytest would derive both from the file's folder), and
    `pythonpath`, which pytest resolves from the file's folder, made absolute from root."""
    real = os.path.realpath(root)  # pytest's own working folder is a real path
    args = ["-c", str(config), "--rootdir", real, "--confcutdir", real]
    paths = words(chosen.options, "pythonpath") if chosen is not None else ()
    if paths:
        args += ["-o", "pythonpath=" + shlex.join(os.path.join(real, p) for p in paths)]
    return args
