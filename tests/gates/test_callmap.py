"""The call map: the tests that ran a changed line on the base commit run first, as the stage
`tests:covered`, in the project's own pytest; the full suite still decides."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stepswitch.gates.callmap import CALL_MAP_FILE, INSERTED, CallMap, parse_unified_zero
from stepswitch.gates.config import GateConfig, TestsGate
from stepswitch.gates.staged_tests import covered_first
from stepswitch.gates.suite import GateSuite
from stepswitch.gates.tools import pytest_command
from tests.harness.repo import edit, git, write_repo

# shape() runs its first branch for one test and its second for another; LIMIT is module-level.
GEOMETRY = {
    "geo/__init__.py": "",
    "geo/shapes.py": """
        LIMIT = 100

        def shape(n):
            if n < 0:
                return "negative"
            return "square" if n % 2 == 0 else "odd"

        def area(w, h):
            return w * h
    """,
    "tests/test_shape_sign.py": """
        from geo.shapes import shape

        def test_negative():
            assert shape(-1) == "negative"
    """,
    "tests/test_shape_parity.py": """
        from geo.shapes import shape

        def test_square():
            assert shape(2) == "square"

        def test_odd():
            assert shape(3) == "odd"
    """,
    "tests/test_area.py": """
        from geo.shapes import LIMIT, area

        def test_area():
            assert area(2, 3) == 6

        def test_limit():
            assert LIMIT == 100
    """,
}


def _suite(root: Path, state: Path, command: str | None = None, **options: bool) -> GateSuite:
    gate = TestsGate(name="tests", kind="tests", command=command or pytest_command(root), **options)
    return GateSuite(GateConfig((gate,), "test"), root, dict(os.environ), state_dir=state)


@pytest.fixture
def traced(tmp_path: Path) -> tuple[Path, GateSuite, str]:
    root = write_repo(tmp_path / "repo", GEOMETRY, commit=True)
    suite = _suite(root, tmp_path / "state")
    commit = git(root, "rev-parse", "HEAD").strip()
    line = suite.record_call_map(commit)
    assert line.startswith(f"gates: call map: 5 tests traced at {commit[:12]} in ")
    return root, suite, commit


# -- what the plugin records and what the map selects --------------------------------------------


@pytest.mark.slow  # real pytest runs
def test_the_map_knows_which_tests_ran_which_line(traced: tuple[Path, GateSuite, str]) -> None:
    root, suite, commit = traced
    found = suite.call_map(commit)
    assert found is not None
    # Line 5 is `return "negative"`, line 6 the parity return, line 9 area's body.
    assert found.covering({"geo/shapes.py": [5]}) == (
        ["tests/test_shape_sign.py::test_negative"],
        True,
    )
    parity, complete = found.covering({"geo/shapes.py": [6]})
    assert complete and sorted(parity) == [
        "tests/test_shape_parity.py::test_odd",
        "tests/test_shape_parity.py::test_square",
    ]
    # `def area` itself runs at import (its defaults, its decorators): its callers go first,
    # and the graph must look too, as for any line that runs at import.
    assert found.covering({"geo/shapes.py": [8]}) == (["tests/test_area.py::test_area"], False)
    # A module-level line ran at import: the map cannot place it, so the graph must look too.
    assert found.covering({"geo/shapes.py": [1]}) == ([], False)
    # Test modules are not traced: a change to one is the graph's to place.
    assert found.covering({"tests/test_area.py": [4]}) == ([], False)
    # Kept on disk for the next run at the same commit, never for another one.
    assert CallMap.read(suite.state_dir / CALL_MAP_FILE, commit) == found
    assert CallMap.read(suite.state_dir / CALL_MAP_FILE, "0" * 40) is None
    assert _suite(root, suite.state_dir).call_map(commit) == found


@pytest.mark.slow  # real pytest runs
def test_a_broken_line_runs_only_the_tests_that_ran_it_first_and_fails_there(
    traced: tuple[Path, GateSuite, str],
) -> None:
    root, suite, _ = traced
    edit(root, "geo/shapes.py", 'return "negative"', 'return "positive"')
    result = suite.run(["geo/shapes.py"])
    assert result.stages == ("tests:covered",)
    [stage] = result.test_stages
    assert (stage.files, stage.tests, stage.passed) == (1, 1, False)
    assert stage.first_failure == "tests/test_shape_sign.py::test_negative"
    assert not result.full_ran


@pytest.mark.slow  # real pytest runs
def test_a_change_the_map_places_passes_its_stage_and_the_full_suite_still_decides(
    traced: tuple[Path, GateSuite, str],
) -> None:
    root, suite, _ = traced
    # The parity tests pass with this change; test_limit fails only because LIMIT changed too,
    # at module level, where the map cannot see: the graph's stage and the full suite can.
    edit(root, "geo/shapes.py", "n % 2 == 0", "not n % 2")
    result = suite.run(["geo/shapes.py"])
    assert result.stages == ("tests:covered", "tests:full")
    assert result.passed and result.full_ran
    edit(root, "geo/shapes.py", "LIMIT = 100", "LIMIT = 99")
    result = suite.run(["geo/shapes.py"])
    assert result.stages[0] == "tests:covered" and result.results[0].passed
    # The module-level line is not fully covered, so the graph looks too; every test file
    # imports geo.shapes, so its stage would be the whole suite again: skipped, and said.
    assert result.stages[1] == "tests:full"
    assert "gates: tests:impacted skipped: " in "\n".join(result.warm_notes)
    assert not result.passed
    assert result.failed is not None and "test_limit" in result.failed.report


@pytest.mark.slow  # real pytest runs
def test_a_map_of_another_commit_is_never_used(traced: tuple[Path, GateSuite, str]) -> None:
    root, suite, _ = traced
    git(
        root,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit",
        "-qm",
        "x",
        "--allow-empty",
    )
    edit(root, "geo/shapes.py", 'return "negative"', 'return "positive"')
    fresh = _suite(root, suite.state_dir)
    result = fresh.run(["geo/shapes.py"])
    assert "tests:covered" not in result.stages
    assert not result.passed  # the import graph's stage finds it instead


@pytest.mark.slow  # real pytest runs
def test_a_suite_that_fails_before_any_edit_is_traced_past_its_failures(tmp_path: Path) -> None:
    # Sorted first, and the gate's command stops at the first failure (-x): the map must not.
    files = {**GEOMETRY, "tests/test_a_broken.py": "def test_broken():\n    assert False\n"}
    root = write_repo(tmp_path / "repo", files, commit=True)
    suite = _suite(root, tmp_path / "state")
    commit = git(root, "rev-parse", "HEAD").strip()
    line = suite.record_call_map(commit)
    assert line.startswith(f"gates: call map: 6 tests traced at {commit[:12]} in "), line
    assert "; the suite fails before any edit: tests:call-map: failed (exit 1)" in line
    found = suite.call_map(commit)
    assert found is not None
    assert found.covering({"geo/shapes.py": [5]}) == (
        ["tests/test_shape_sign.py::test_negative"],
        True,
    )


@pytest.mark.slow  # real pytest runs
def test_a_suite_that_cannot_run_leaves_no_map_and_says_why(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", GEOMETRY, commit=True)
    suite = _suite(root, tmp_path, "exit 3")
    commit = git(root, "rev-parse", "HEAD").strip()
    line = suite.record_call_map(commit)
    assert (
        line
        == "gates: no call map: the traced full suite wrote none (tests:call-map: failed (exit 3))"
    )
    assert suite.call_map(commit) is None
    assert not (tmp_path / CALL_MAP_FILE).exists()


def test_call_map_false_turns_it_off(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", GEOMETRY, commit=True)
    suite = _suite(root, tmp_path, "false", call_map=False)
    assert suite.record_call_map("0" * 40) == "gates: call map: off (call_map = false)"


# -- reading a change ----------------------------------------------------------------------------


def test_the_base_side_of_a_diff_gives_replaced_removed_and_surrounding_lines() -> None:
    diff = "\n".join(
        [
            "diff --git a/pkg/a.py b/pkg/a.py",
            "--- a/pkg/a.py",
            "+++ b/pkg/a.py",
            "@@ -3 +3 @@ def f():",  # one line replaced
            "@@ -10,2 +9,0 @@",  # two removed
            "@@ -20,0 +19,3 @@",  # three inserted after line 20
            "diff --git a/old.py b/new.py",
            "similarity index 90%",
            "rename from old.py",
            "rename to new.py",
            "--- a/old.py",
            "+++ b/new.py",
            "@@ -7 +7 @@",
            "diff --git a/fresh.py b/fresh.py",
            "new file mode 100644",
            "--- /dev/null",
            "+++ b/fresh.py",
            "@@ -0,0 +1,2 @@",
        ]
    )
    assert parse_unified_zero(diff) == {
        "pkg/a.py": [3, 10, 11, 20, 21, INSERTED],
        "old.py": [7],  # the base's name: the map knows the file by it
    }


def test_an_insertion_is_never_fully_covered() -> None:
    ran = {"m.py": {4: 0, 5: 0}}
    found = CallMap("c", "/r", "/r", (("t.py::a", 0.1),), ((0,),), ran, {}, {"m.py": ()})
    tests, complete = found.covering({"m.py": [4, 5, INSERTED]})
    assert tests == ["t.py::a"] and not complete


def test_a_malformed_map_on_disk_is_no_map(tmp_path: Path) -> None:
    path = tmp_path / CALL_MAP_FILE
    path.write_text(json.dumps({"commit": "c", "root": "/r", "groups": [[5]]}), encoding="utf-8")
    assert CallMap.read(path, "c") is None
    path.write_text("{", encoding="utf-8")
    assert CallMap.read(path, "c") is None


def test_the_first_covered_stage_holds_two_files_at_most_and_the_rest_follow() -> None:
    covered = [
        ("tests/test_a.py", "tests/test_a.py::test_quick"),  # the shortest test
        ("tests/test_b.py", "tests/test_b.py::test_1"),
        ("tests/test_c.py", "tests/test_c.py::test_1"),
        ("tests/test_b.py", "tests/test_b.py::test_2"),  # test_b.py holds the most
        ("tests/test_d.py", "tests/test_d.py::test_1"),
    ]
    first, rest = covered_first(covered)
    assert {f for f, _ in first} == {"tests/test_a.py", "tests/test_b.py"}
    assert [t for _, t in first] == [covered[0][1], covered[1][1], covered[3][1]]  # in order
    assert rest == [covered[2], covered[4]]
    assert covered_first(covered[:1]) == [covered[:1]]
    both = [covered[0], covered[1], covered[3]]
    assert covered_first(both) == [both]  # the shortest's file and the busiest hold them all
    assert covered_first([]) == []


def test_a_failure_outside_the_first_two_files_is_found_by_the_covered_rest(
    tmp_path: Path,
) -> None:
    files = dict(GEOMETRY)
    for name in ("one", "two", "three"):
        files[f"tests/test_more_{name}.py"] = """
            from geo.shapes import area

            def test_area_again():
                assert area(1, 1) >= 0
        """
    files["tests/test_zz_exact.py"] = """
        from geo.shapes import area

        def test_area_exactly():
            assert area(2, 2) == 4
    """
    root = write_repo(tmp_path / "repo", files, commit=True)
    _suite(root, tmp_path / "state").record_call_map(git(root, "rev-parse", "HEAD").strip())
    # The exact test is recorded as the slowest: neither the shortest nor in the busiest file.
    kept = tmp_path / "state" / CALL_MAP_FILE
    data = json.loads(kept.read_text(encoding="utf-8"))
    data["tests"] = [[t, 9.0 if "exact" in t else s] for t, s in data["tests"]]
    kept.write_text(json.dumps(data), encoding="utf-8")
    edit(root, "geo/shapes.py", "return w * h", "return w * h + (w == h == 2)")
    result = _suite(root, tmp_path / "state").run(["geo/shapes.py"])
    assert result.stages == ("tests:covered", "tests:covered-rest")
    first, rest = result.test_stages
    assert first.passed and first.files is not None and first.files <= 2 and not rest.passed
    assert rest.first_failure == "tests/test_zz_exact.py::test_area_exactly"


# -- a trace too long to wait for: in the background, on a copy of the start -------------------


@pytest.mark.slow  # real pytest runs
def test_a_background_trace_maps_a_copy_of_the_start_while_the_worktree_changes(
    tmp_path: Path,
) -> None:
    root = write_repo(tmp_path / "repo", GEOMETRY, commit=True)
    suite = _suite(root, tmp_path / "state")
    commit = git(root, "rev-parse", "HEAD").strip()

    line = suite.record_call_map(commit, background=True)
    # The agent edits at once: the trace runs on the start's files, not on these.
    edit(root, "geo/shapes.py", 'return "negative"', 'return "positive"')
    assert line.startswith(f"gates: call map: tracing the full suite at {commit[:12]} in the")
    assert suite.wait_for_call_map(120)

    found = suite.call_map(commit)
    assert found is not None
    assert found.covering({"geo/shapes.py": [5]}) == (
        ["tests/test_shape_sign.py::test_negative"],
        True,
    )
    result = suite.run(["geo/shapes.py"])
    assert result.stages == ("tests:covered",) and not result.passed
    assert any(n.startswith("gates: call map: 5 tests traced") for n in result.warm_notes)
    assert not [p for p in (tmp_path / "repo").parent.iterdir() if p.name.startswith("ssw-start")]
    suite.close()


@pytest.mark.slow  # real pytest runs
def test_the_end_of_the_task_ends_a_background_trace_that_has_not(tmp_path: Path) -> None:
    # A test that waits on a FIFO nobody writes: the trace never ends on its own.
    files = {
        **GEOMETRY,
        "tests/test_wait.py": """
            import os

            def test_waits():
                path = os.path.join(os.environ["TMPDIR"], "never")
                if not os.path.exists(path):
                    os.mkfifo(path)
                open(path).read()
        """,
    }
    root = write_repo(tmp_path / "repo", files, commit=True)
    (tmp_path / "tmp").mkdir()
    suite = GateSuite(
        GateConfig((TestsGate(name="tests", kind="tests", command=pytest_command(root)),), "t"),
        root,
        {**os.environ, "TMPDIR": str(tmp_path / "tmp")},
        state_dir=tmp_path / "state",
    )
    commit = git(root, "rev-parse", "HEAD").strip()
    suite.record_call_map(commit, background=True)
    tracing = suite._tracing
    assert tracing is not None and not tracing.wait(0.5)  # still running

    suite.close()

    assert tracing.wait(0) and tracing.news() == (
        "gates: no call map: the task ended before the trace did"
    )
    assert not tracing.copy.exists()
