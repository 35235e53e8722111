"""A pytest plugin the tests gate loads into the project's own pytest (`-p ssw_select` in
PYTEST_ADDOPTS, this folder on PYTHONPATH). It imports nothing of Stepswitch: it runs under the
project's interpreter.

SSW_SELECT names a JSON file: {"files": [absolute paths, in the order to run] or null,
"durations": absolute path to write seconds per test file to, or null}.
- With a list, every other test module is left out of collection (pytest_ignore_collect), so
  the project's collection, conftest files and hooks all still apply to the selected ones.
- "tests" (a list of test ids, as pytest names them from its rootdir) keeps only those items of
  the selected files, in that order; the others are deselected the way `-k` deselects them.
- The collected items are ordered by that list, each file's own order kept.
- Without a list, "order" (same form) only orders the items: the full suite, most likely
  failures first.
- With "durations", the time of each test file's tests is written there when the session ends.
- With "session", what pytest itself reported is written there once the session has ended:
  {"exitstatus", "tests", "failed", "errors"} (failed tests, and errors of setup, teardown and
  collection). The gates read it: a pytest that exits 0 without writing it ended before its
  session did (`os._exit` in code the tests import), and one that exits 0 with failures in it
  had its status changed after the tests ran.
- SSW_PYTEST_PLUGINS (JSON: entry point name -> [`module[:attr]`, metadata folder]) names the
  plugins of the project's environment: the gates turn pytest's autoload off (gates.plugins),
  and they are registered here under those names when this plugin is loaded, before any
  conftest file.
- With "outcomes" (a path), the ids of the tests that ran (passed or failed) and of those
  skipped or xfailed (a module skipped whole: its file's id) are written there when the session
  ends: `tests:as-before` compares them with the base commit's. "every_test": true undoes -x.
- With "calls" ({"root": folder, "out": path}), the Python functions under `root` each test
  calls (setup and teardown included) are recorded and written to `out` when the session ends:
  the call map the gates use to run first the tests that ran a changed line. The run goes past
  failures (-x is undone). Nothing is recorded when another tool (coverage, a debugger) already
  traces.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import sys
from collections.abc import Generator
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import pytest

_spec: dict[str, Any] = {}
_rank: dict[str, int] = {}
_times: dict[str, float] = {}
_counts = {"tests": 0, "failed": 0, "errors": 0}
_session: list[pytest.Session] = []
_outcomes: dict[str, list[str]] = {"ran": [], "skipped": []}

# Loaded before the project's conftest files and tests (PYTEST_ADDOPTS comes first): what exists
# now (pytest, its plugins, the standard library) lives as long as the run. Out of the
# collector's sight, as in a warm stage, so the collections a fresh pytest makes walk only what
# the project's code and tests make (ADR 0019 addendum).
gc.freeze()


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """The plugins SSW_PYTEST_PLUGINS names (entry point name -> [`module[:attr]`, its
    distribution's metadata folder]), registered under their names as pytest's autoload would,
    which the gates turn off: loaded when this plugin is, before the project's conftest files."""
    declared = json.loads(os.environ.get("SSW_PYTEST_PLUGINS") or "{}")
    for name, (value, metadata) in declared.items():
        if pluginmanager.is_blocked(name) or pluginmanager.has_plugin(name):
            continue
        module, _, attr = (part.strip() for part in str(value).partition(":"))
        pluginmanager.rewrite_hook.mark_rewrite(module)
        try:
            plugin: object = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module.split(".")[0]:
                raise
            continue  # a pytest of another environment (the tests command's own): not there
        for part in attr.split(".") if attr else ():
            plugin = getattr(plugin, part)
        if pluginmanager.register(plugin, name=name) is not None:
            _record_distribution(pluginmanager, plugin, str(metadata))


def _record_distribution(
    pluginmanager: pytest.PytestPluginManager, plugin: object, path: str
) -> None:
    """What autoload records of a plugin's distribution (pluggy's own list): pytest's
    `required_plugins` and its header read it."""
    try:
        from importlib.metadata import PathDistribution

        dist = PathDistribution(Path(path))
        known: list[Any] = pluginmanager._plugin_distinfo
        known.append((plugin, dist))
        if not hasattr(pluginmanager.list_plugin_distinfo()[-1][1], "project_name"):
            from pluggy._manager import DistFacade  # type: ignore[attr-defined]  # older pluggy

            known[-1] = (plugin, DistFacade(dist))
    except (AttributeError, ImportError, IndexError):
        pass  # then `required_plugins` cannot see it, as with any plugin named by `-p`


def pytest_configure(config: pytest.Config) -> None:
    name = os.environ.get("SSW_SELECT")
    if not name:
        return
    _counts.update(tests=0, failed=0, errors=0)
    _spec.update(json.loads(Path(name).read_text(encoding="utf-8")))
    files = _spec.get("files")
    if files is not None:
        _rank.update({str(Path(f)): i for i, f in enumerate(files)})
    _outcomes.update(ran=[], skipped=[])
    if _spec.get("every_test"):
        config.option.maxfail = 0  # every test's outcome, past failures too (-x undone)
    calls = _spec.get("calls")
    if calls:
        # Every test, past failures too (-x, --maxfail): a suite that fails before any edit
        # still maps, and a task often starts from one.
        config.option.maxfail = 0
        config.pluginmanager.register(_CallRecorder(str(calls["root"]), str(calls["out"])))


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if _spec.get("files") is None or collection_path.is_dir():
        return None
    if collection_path.name in ("conftest.py", "__init__.py"):
        return None
    return True if str(collection_path) not in _rank else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = _spec.get("tests")
    if tests is not None:
        wanted = {t: i for i, t in enumerate(tests)}
        kept = sorted((i for i in items if i.nodeid in wanted), key=lambda i: wanted[i.nodeid])
        dropped = [i for i in items if i.nodeid not in wanted]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = kept
        return
    if not _rank and _spec.get("order") is None:
        return
    rank = _rank or {str(Path(f)): i for i, f in enumerate(_spec.get("order") or [])}
    last = len(rank)
    items.sort(key=lambda item: rank.get(str(item.path), last))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _spec.get("durations"):
        path = report.nodeid.split("::", 1)[0]  # relative to pytest's rootdir
        _times[path] = _times.get(path, 0.0) + report.duration
    if report.when == "call":
        _counts["tests"] += 1
    if report.failed:
        _counts["failed" if report.when == "call" else "errors"] += 1
    if report.skipped:  # a skip in any phase, or an xfail
        _outcomes["skipped"].append(report.nodeid)
    elif report.when == "call" or report.failed:  # it ran: passed, failed, or its setup erred
        _outcomes["ran"].append(report.nodeid)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _counts["errors"] += 1
    elif report.skipped:  # pytest.skip(allow_module_level=True): the module's tests are gone
        _outcomes["skipped"].append(report.nodeid)


def pytest_sessionstart(session: pytest.Session) -> None:
    _session[:] = [session]


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """After every pytest_sessionfinish: the status pytest will exit with, and what it saw."""
    out = _spec.get("session")
    if not out or not _session:
        return
    status = int(_session[0].exitstatus)
    Path(out).write_text(json.dumps({"exitstatus": status, **_counts}), encoding="utf-8")


def pytest_sessionfinish(session: pytest.Session) -> None:
    outcomes = _spec.get("outcomes")
    if outcomes and not hasattr(session.config, "workerinput"):  # xdist's workers: the main's
        Path(outcomes).write_text(json.dumps(_outcomes), encoding="utf-8")
    out = _spec.get("durations")
    if out and _times:
        root = str(session.config.rootpath)
        data = {"rootdir": root, "seconds": {k: round(v, 4) for k, v in _times.items()}}
        Path(out).write_text(json.dumps(data), encoding="utf-8")


# -- the call map -------------------------------------------------------------------------------

_OUTSIDE = ("site-packages", "dist-packages")
_MONITORING: Any = getattr(sys, "monitoring", None)  # Python 3.12+
_MONITORING_IDS = (4, 3)  # sys.monitoring tool ids no standard tool claims
_CALLED = 0  # the line number that stands for "the function was called"


class _CallRecorder:
    """Which lines of the project's code (files under `root`, test modules left out) each test
    ran, setup and teardown included, and which of its functions it called. On Python 3.12+
    through sys.monitoring (each line's first run per test only: the event is disabled after
    it and re-armed between tests); before that through sys.settrace, with a line tracer only
    in the project's own frames."""

    def __init__(self, root: str, out: str) -> None:
        self.root = os.path.realpath(root) + os.sep
        self.out = out
        self.ran: set[tuple[CodeType, int]] = set()
        self.by_test: list[tuple[str, float, set[tuple[CodeType, int]]]] = []
        self.duration = 0.0
        self.tool: int | None = None
        self.traced = True
        self.mine: dict[str, bool] = {}  # file name: is it project code (not a test module)?
        self.tests: set[str] = set()

    def _is_mine(self, filename: str) -> bool:
        mine = self.mine.get(filename)
        if mine is None:
            real = os.path.realpath(filename) if os.path.isabs(filename) else ""
            mine = (
                real.startswith(self.root)
                and not any(part in real for part in _OUTSIDE)
                and real not in self.tests
            )
            self.mine[filename] = mine
        return mine

    def _tracer(self) -> Any:
        """sys.settrace's function, as closures: it runs on every call and line of the project's
        code, so it looks nothing up that it can hold."""
        ran = self.ran
        record = ran.add
        is_mine = self._is_mine

        def on_line(frame: FrameType, event: str, arg: object) -> Any:
            if event == "line":
                record((frame.f_code, frame.f_lineno))
            return on_line

        def on_call(frame: FrameType, event: str, arg: object) -> Any:
            code = frame.f_code
            if not is_mine(code.co_filename):
                return None
            record((code, _CALLED))
            return on_line

        return on_call

    def _on_start(self, code: CodeType, offset: int) -> object:
        if self._is_mine(code.co_filename):
            self.ran.add((code, _CALLED))
            return None
        return _MONITORING.DISABLE  # not ours: its lines are never recorded either

    def _on_line_event(self, code: CodeType, line: int) -> object:
        if self._is_mine(code.co_filename):
            self.ran.add((code, line))
        return _MONITORING.DISABLE

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.tests = {os.path.realpath(str(item.path)) for item in session.items}
        self.mine.clear()
        if sys.gettrace() is not None:
            self.traced = False  # coverage or a debugger: theirs, not ours
            return
        monitoring = _MONITORING
        if monitoring is None:
            return
        for tool in _MONITORING_IDS:
            if monitoring.get_tool(tool) is None:
                monitoring.use_tool_id(tool, "ssw_select")
                events = monitoring.events
                monitoring.register_callback(tool, events.PY_START, self._on_start)
                monitoring.register_callback(tool, events.LINE, self._on_line_event)
                self.tool = tool
                return
        self.traced = False

    @pytest.hookimpl(hookwrapper=True)  # the old style: older pytest versions have only it
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, None]:
        if not self.traced:
            yield
            return
        self.ran = set()
        self.duration = 0.0
        if self.tool is not None:
            events = _MONITORING.events
            _MONITORING.restart_events()
            _MONITORING.set_events(self.tool, events.PY_START | events.LINE)
        else:
            sys.settrace(self._tracer())
        try:
            yield
        finally:
            if self.tool is not None:
                _MONITORING.set_events(self.tool, 0)
            else:
                sys.settrace(None)
            self.by_test.append((item.nodeid, self.duration, self.ran))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.duration += report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.tool is not None:
            _MONITORING.free_tool_id(self.tool)
        if not self.traced:
            return
        names: dict[str, str] = {}
        lines: dict[str, dict[int, list[int]]] = {}
        spans: dict[str, dict[int, list[Any]]] = {}
        for index, (_, _, ran) in enumerate(self.by_test):
            for code, line in ran:
                rel = names.get(code.co_filename) or names.setdefault(
                    code.co_filename, self._relative(code.co_filename)
                )
                if line == _CALLED:
                    span = spans.setdefault(rel, {}).setdefault(
                        code.co_firstlineno, [_last_line(code), []]
                    )
                    _append(span[1], index)
                else:
                    _append(lines.setdefault(rel, {}).setdefault(line, []), index)
        # Lines of one block ran in the same tests: each list of tests is written once.
        groups: dict[tuple[int, ...], int] = {}

        def group(tests: list[int]) -> int:
            return groups.setdefault(tuple(tests), len(groups))

        data = {
            "rootdir": str(session.config.rootpath),
            "tests": [[nodeid, round(seconds, 4)] for nodeid, seconds, _ in self.by_test],
            "lines": {
                rel: {str(line): group(t) for line, t in sorted(found.items())}
                for rel, found in sorted(lines.items())
            },
            "functions": {
                rel: [[first, last, group(t)] for first, (last, t) in sorted(found.items())]
                for rel, found in sorted(spans.items())
            },
        }
        data["groups"] = [list(g) for g in groups]
        Path(self.out).write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")

    def _relative(self, filename: str) -> str:
        return os.path.realpath(filename)[len(self.root) :].replace(os.sep, "/")


def _append(tests: list[int], index: int) -> None:
    if not tests or tests[-1] != index:
        tests.append(index)


def _last_line(code: CodeType) -> int:
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return max(lines, default=code.co_firstlineno)
