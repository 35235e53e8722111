"""Bench runs through the Python API, in this process: the built-in contestants, grading that
only believes the test runner, harness errors counted, and what resume keeps and reruns."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stepswitch.bench import journal
from stepswitch.bench.contestants import BuiltinContestant
from stepswitch.bench.executor import inline_executor
from stepswitch.bench.plan import RunKey
from stepswitch.bench.results import CSV_COLUMNS, ResultRow
from stepswitch.bench.runner import BenchResult, BenchSpec, run_bench, summarize_folder
from stepswitch.bench.task import load_suite
from stepswitch.errors import UsageError
from stepswitch.records.folder import load_run

from . import BUGGY, FIXED, TASK_TOML, patch_of, write_task
from .fakes import FakeContestant

ORACLE, NULL = BuiltinContestant("oracle"), BuiltinContestant("null")


def bench(root: Path, suite: Path, contestants: list, **options) -> BenchResult:
    spec = BenchSpec(root=root, tasks=load_suite(suite), contestants=contestants, **options)
    return run_bench(spec, executor=inline_executor, resamples=200)


def rows_by_name(result: BenchResult) -> dict[str, ResultRow]:
    return {r.contestant: r for r in result.rows}


@pytest.fixture(scope="module")
def six(tmp_path_factory: pytest.TempPathFactory) -> BenchResult:
    """One task, six contestants: the built-ins and four fakes, run once for this module."""
    tmp = tmp_path_factory.mktemp("six")
    write_task(tmp, "t1")
    contestants = [
        ORACLE,
        NULL,
        FakeContestant("cheat", "cheat"),
        FakeContestant("cheatfix", "cheat_fix"),
        FakeContestant("flaky", "provider_error"),
        FakeContestant("odd", "other_model"),
    ]
    return bench(tmp / "runs" / "b1", tmp / "suite", contestants)


@pytest.mark.slow
def test_oracle_passes_and_null_fails_and_both_are_labelled_as_built_ins(six: BenchResult):
    rows = rows_by_name(six)
    assert six.status == "complete" and six.exit_code == 0
    assert (rows["oracle"].passed, rows["oracle"].outcome) == (True, "done")
    # null changes nothing: never `done` (ADR 0050), and graded on the untouched start.
    assert (rows["null"].passed, rows["null"].outcome) == (False, "no_change")
    assert rows["null"].verdict  # graded: the hidden tests ran on the start and failed
    assert rows["oracle"].contestant_kind == "oracle" and rows["null"].contestant_kind == "null"
    assert rows["cheat"].contestant_kind == "policy"
    assert rows["oracle"].dollars_high == rows["null"].dollars_high == 0.0
    run = load_run(six.root / rows["oracle"].folder).run
    assert run.scripted and run.policy_path == "builtin:oracle" and run.worktree == "."
    assert (run.ids.bench_id, run.ids.contestant, run.ids.attempt) == ("b1", "oracle", 0)
    patch = (six.root / rows["oracle"].folder / "change.patch").read_text()
    assert "+    return a + b" in patch
    assert (six.root / rows["null"].folder / "change.patch").read_text() == ""
    record = json.loads((six.root / "run.json").read_text())
    labels = {c["name"]: (c["kind"], c["label"]) for c in record["contestants"]}
    assert labels["oracle"][0] == "oracle" and "no model" in labels["oracle"][1]
    assert record["prices"]["scripted/scripted-small"]["input"] == 0.0
    assert record["status"] == "complete" and record["commit"] and record["versions"]["python"]
    summary = json.loads((six.root / "summary.json").read_text())
    assert summary["contestants"]["oracle"]["kind"] == "oracle"


@pytest.mark.slow
def test_results_csv_has_one_row_per_task_run_and_no_machine_paths(six: BenchResult):
    lines = (six.root / "results.csv").read_text().splitlines()
    assert lines[0].split(",") == list(CSV_COLUMNS)
    assert len(lines) == 1 + 6
    tmp = str(six.root.parent.parent)
    for path in six.root.rglob("*"):
        if path.is_file() and not path.name.startswith("ledger.sqlite"):
            assert tmp not in path.read_text(errors="replace"), path


@pytest.mark.slow
def test_grading_ignores_test_files_and_result_files_the_agent_wrote(six: BenchResult):
    rows = rows_by_name(six)
    cheat = six.root / rows["cheat"].folder
    patch = (cheat / "change.patch").read_text()
    for planted in ("tests/test_calc.py", ".ssw_hidden/test_hidden.py", "report.xml", "grade.json"):
        assert f"b/{planted}" in patch  # committed in the agent's tree
    assert not rows["cheat"].passed and rows["cheat"].verdict == "1 failed"
    grade = json.loads((cheat / "grade.json").read_text())  # the bench's, outside the tree
    assert grade["failing"] == [".ssw_hidden.test_hidden::test_add"] and grade["report"]
    # The same planted files beside a real fix do not stop it passing: only the runner counts.
    assert rows["cheatfix"].passed and rows["cheatfix"].verdict == "1 passed"


@pytest.mark.slow
def test_a_provider_error_before_any_step_is_a_harness_error_in_every_denominator(
    six: BenchResult,
):
    flaky = rows_by_name(six)["flaky"]
    assert (flaky.outcome, flaky.passed) == ("harness_error", False)
    assert flaky.reason.startswith("a provider error before any step: ")
    assert "HTTP 503" in flaky.reason
    assert flaky.run_outcome == "error" and flaky.verdict == ""  # not graded
    stats = six.summary["contestants"]["flaky"]["all"]
    assert (stats["task_runs"], stats["harness_errors"], stats["pass_rate"]) == (1, 1, 0.0)
    assert six.summary["harness_errors"] == 1
    pairs = [c for c in six.summary["comparisons"] if c["a"] == "oracle" and c["b"] == "flaky"]
    assert pairs[0]["passed_only_by_a"] == ["suite/t1"] and pairs[0]["pairs"] == 1


@pytest.mark.slow
def test_a_provider_serving_another_model_is_flagged(six: BenchResult):
    odd = rows_by_name(six)["odd"]
    assert odd.served_other_model and odd.served_models == {"scripted-small": "someone-else-9b"}
    [flagged] = six.summary["served_other_model"]
    assert (flagged["contestant"], flagged["task"]) == ("odd", "suite/t1")
    assert summarize_folder(six.root, resamples=50)["served_other_model"] == [flagged]


@pytest.mark.slow
def test_grading_without_a_verdict_is_a_harness_error_and_the_oracle_deletes_with_run(
    tmp_path: Path,
):
    # t1's hidden command cannot start: no JUnit report, so no verdict. t2's reference deletes a
    # module; there is no delete tool, so the oracle removes it with `run` before EDIT.
    broken = TASK_TOML.format(name="t1").replace(
        "python -m pytest -q -p no:cacheprovider", "pytest-not-installed -q"
    )
    write_task(tmp_path, "t1", {"task.toml": broken})
    legacy = "def add(a, b):\n    return a - b\n"
    hidden = """
        import os

        from calc import add


        def test_add_and_no_legacy_module():
            assert add(2, 3) == 5
            assert not os.path.exists("legacy.py")
    """
    deletion = (
        "diff --git a/legacy.py b/legacy.py\ndeleted file mode 100644\n--- a/legacy.py\n"
        "+++ /dev/null\n@@ -1,2 +0,0 @@\n-def add(a, b):\n-    return a - b\n"
    )
    write_task(
        tmp_path,
        "t2",
        {
            "repo/legacy.py": legacy,
            "tests/test_hidden.py": hidden,
            "solution/solution.patch": patch_of("calc.py", BUGGY, FIXED) + deletion,
        },
    )
    result = bench(tmp_path / "runs" / "b2", tmp_path / "suite", [ORACLE])
    rows = {r.task: r for r in result.rows}
    assert rows["suite/t1"].outcome == "harness_error"
    assert rows["suite/t1"].reason.startswith("grading gave no verdict: no JUnit report")
    assert result.summary["contestants"]["oracle"]["all"]["pass_rate"] == 0.5
    assert rows["suite/t2"].passed, rows["suite/t2"].reason
    steps = load_run(result.root / rows["suite/t2"].folder).model_steps
    [rm] = [c for s in steps for c in s.tool_calls if c.name == "run"]
    assert "rm -f -- legacy.py" in rm.arguments and rm.exit_code == 0


@pytest.mark.slow
def test_resume_keeps_finished_runs_and_reruns_one_that_never_called_a_model(tmp_path: Path):
    write_task(tmp_path, "t1")
    root = tmp_path / "runs" / "b3"
    root.mkdir(parents=True)
    # A previous session started null's run and died before its first call (no ledger row).
    journal.append(root / journal.JOURNAL, "started", RunKey("suite/t1", "null", 0), pid=1)
    first = bench(root, tmp_path / "suite", [NULL])
    assert [(r.contestant, r.outcome) for r in first.rows] == [("null", "no_change")]
    events = [json.loads(line)["event"] for line in (root / journal.JOURNAL).open()]
    assert events == ["started", "released", "started", "finished"]

    again = bench(root, tmp_path / "suite", [NULL])  # the same bench, nothing left to do
    assert again.rows == first.rows and again.status == "complete"
    assert len((root / journal.JOURNAL).read_text().splitlines()) == 4
    record = json.loads((root / "run.json").read_text())
    assert [s["ran"] for s in record["sessions"]] == [1, 0]
    with pytest.raises(UsageError, match="holds another bench"):
        bench(root, tmp_path / "suite", [ORACLE])


def test_a_bench_needs_tasks_and_distinct_task_names(tmp_path: Path):
    write_task(tmp_path, "t1")
    tasks = load_suite(tmp_path / "suite")
    with pytest.raises(UsageError, match="tasks given twice"):
        run_bench(BenchSpec(root=tmp_path / "r", tasks=tasks * 2, contestants=[NULL]))
    with pytest.raises(UsageError, match="no tasks"):
        run_bench(BenchSpec(root=tmp_path / "r", tasks=[], contestants=[NULL]))
    assert not (tmp_path / "r").exists()


def test_a_bench_of_a_task_whose_requirement_is_missing_is_refused_before_any_run(tmp_path):
    folder = write_task(tmp_path, "needs")
    toml = folder / "task.toml"
    toml.write_text('requires = ["ssw-no-such-package"]\n' + toml.read_text())
    tasks = load_suite(tmp_path / "suite")
    with pytest.raises(UsageError) as refused:
        run_bench(BenchSpec(root=tmp_path / "r", tasks=tasks, contestants=[NULL]))
    assert str(refused.value) == (
        "suite/needs requires ssw-no-such-package (not installed): install it beside ssw (on "
        "every worker of a cluster too), or leave the task out"
    )
    assert not (tmp_path / "r").exists()
    assert os.listdir(tmp_path) == ["suite"]


def test_recorded_text_loses_the_machines_temporary_and_home_folders():
    import tempfile

    from stepswitch.bench.readback import scrub

    scratch = Path(tempfile.gettempdir()) / "ssw-bench-k3x_9q"
    text = f"File {scratch}/repo/calc.py, line 2; see {Path.home()}/.pyenv/lib/x.py"
    assert scrub(text) == "File <scratch>/repo/calc.py, line 2; see ~/.pyenv/lib/x.py"


def test_recorded_text_loses_the_pinned_configs_folder_and_ssws_own_path():
    import tempfile

    import stepswitch
    from stepswitch.bench.readback import scrub

    config = Path(tempfile.gettempdir()) / "ssw-test-config-7vhe5zs7" / "dc27" / "pyproject.toml"
    warm = Path(stepswitch.__file__).parent / "gates" / "ssw_pytest" / "ssw_warm.py"
    text = f"from {config}, rootdir x\n{warm}:138: PytestWarning"
    assert scrub(text) == (
        "from <ssw-config>/dc27/pyproject.toml, rootdir x\n"
        "<stepswitch>/gates/ssw_pytest/ssw_warm.py:138: PytestWarning"
    )
