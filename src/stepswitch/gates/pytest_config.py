"""What the project's own pytest configuration says about which files are tests.

Read from the first file pytest itself would take its configuration from: pytest.ini (or
.pytest.ini), pyproject.toml with [tool.pytest.ini_options], tox.ini with [pytest], setup.cfg
with [tool:pytest]. Only `python_files`, `testpaths` and `pythonpath` matter here; everything else
(hooks, plugins, addopts) pytest applies itself, because the impacted stages run pytest's own
collection (see stepswitch/gates/ssw_pytest/ssw_select.py).
"""

from __future__ import annotations

import configparser
import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")


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


def _words(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list):
        return tuple(str(v) for v in value if isinstance(v, str))
    return ()


def _from_mapping(options: dict[str, object]) -> PytestConfig:
    files = _words(options.get("python_files")) or DEFAULT_PYTHON_FILES
    testpaths = tuple(
        PurePosixPath(p).as_posix().removeprefix("./").rstrip("/")
        for p in _words(options.get("testpaths"))
    )
    pythonpath = _words(options.get("pythonpath"))
    return PytestConfig(files, testpaths, pythonpath)


def _ini(path: Path, section: str) -> dict[str, object] | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    return dict(parser[section]) if parser.has_section(section) else None


def read_pytest_config(root: Path) -> PytestConfig:
    """The repository's pytest configuration as pytest would find it at its root (defaults when
    it has none or the file does not parse: the full suite then decides)."""
    for name in ("pytest.ini", ".pytest.ini"):
        if (root / name).is_file():
            return _from_mapping(_ini(root / name, "pytest") or {})
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
            data = {}
        tool = data.get("tool", {})
        pytest = tool.get("pytest", {}) if isinstance(tool, dict) else {}
        options = pytest.get("ini_options") if isinstance(pytest, dict) else None
        if isinstance(options, dict):
            return _from_mapping(options)
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        if (root / name).is_file():
            options = _ini(root / name, section)
            if options is not None:
                return _from_mapping(options)
    return PytestConfig()
