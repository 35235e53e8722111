"""`ssw bench import swebench FILE --repo CLONE`: SWE-bench-style instances of two real toolz
fixes (tests/fixtures/third_party/toolz) become tasks graded by exactly their FAIL_TO_PASS and
PASS_TO_PASS ids, the test patch hidden from the agent; validate holds the start to failing the
first and passing the second; a bad instance is refused in one line (issue 46). A bench run of
oracle and null through the real step machine grades as validate does (the reference's files
pass, the start fails): it is left out here for its cost, and the ADR says what it gave."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stepswitch.bench.grading_folder import grade
from stepswitch.bench.harbor import export_suite
from stepswitch.bench.oracle import reference_change
from stepswitch.bench.swebench import import_swebench
from stepswitch.bench.task import load_task
from stepswitch.bench.validate import validate_tasks
from stepswitch.errors import UsageError
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import commit_all, git

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "third_party" / "toolz"
FIX_551, FIX_603 = "pytoolz__toolz-551", "pytoolz__toolz-603"
TEST_FILE = "toolz/tests/test_itertoolz.py"


def _instances() -> list[dict[str, str]]:
    lines = (FIXTURE / "instances.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The extract as a clone with its two base commits, and the instances' file naming them."""
    root = tmp_path_factory.mktemp("swebench")
    repo = root / "toolz"
    shutil.copytree(FIXTURE / "base", repo)
    git(repo, "init", "-q")
    made = [commit_all(repo, "toolz at 1aa72df")]
    git(repo, "apply", str(FIXTURE / "later.patch"))
    made.append(commit_all(repo, "toolz at 1fb2b9f"))
    instances = _instances()
    upstream = [i["base_commit"] for i in instances]
    file = root / "instances.jsonl"
    lines = [
        json.dumps({**i, "base_commit": made[upstream.index(i["base_commit"])]}) for i in instances
    ]
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return repo, file


@pytest.fixture(scope="module")
def suite(clone: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("suites") / "toolz"
    found = import_swebench(clone[1], clone[0], out)
    assert [(f.name, f.why) for f in found] == [(FIX_551, ""), (FIX_603, "")]
    return out


def test_an_instance_becomes_a_task_whose_test_patch_the_agent_never_sees(
    suite: Path, tmp_path: Path
) -> None:
    [instance] = [i for i in _instances() if i["instance_id"] == FIX_603]
    task = load_task(suite / FIX_603)
    assert task.instruction == instance["problem_statement"].rstrip() + "\n" == task.brief
    assert task.spec.tests.overlay
    assert task.spec.tests.fail_to_pass == (f"{TEST_FILE}::test_partition_all",)
    assert len(task.spec.tests.pass_to_pass) == 49
    assert task.spec.tests.command.endswith(f"no:cacheprovider {TEST_FILE}")
    hidden = (task.hidden_tests / TEST_FILE).read_text(encoding="utf-8")
    assert "ListWithBadLength" in hidden  # the test patch, applied, hidden
    assert "ListWithBadLength" not in (task.repo / TEST_FILE).read_text(encoding="utf-8")
    assert [p.name for p in task.patches] == ["solution.patch"]
    assert (task.folder / "solution/solution.patch").read_text() == instance["patch"]
    with pytest.raises(UsageError, match="grades by test ids"):  # Harbor's test.sh runs all
        export_suite(suite, tmp_path / "harbor")
    assert not (tmp_path / "harbor").exists()


def test_it_validates_failing_fail_to_pass_and_passing_pass_to_pass_at_the_start(
    suite: Path, tmp_path: Path
) -> None:
    task = load_task(suite / FIX_603)
    [result] = validate_tasks([task])
    assert result.valid, result.problem
    found = {check.name: check.found for check in result.checks}
    assert found["start_fails_hidden"] == (
        "fail_to_pass: 1 failed: toolz.tests.test_itertoolz::test_partition_all; "
        "pass_to_pass: 49 passed"
    )
    assert found["reference_hidden_1"] == "50 passed"
    assert found["needs_hidden"] == f"runs the hidden {TEST_FILE}"
    # The oracle writes the reference's files and grades 1; null changes nothing and grades 0.
    change = reference_change(task, task.repo, tmp_path)
    assert list(change.writes) == ["toolz/itertoolz.py"] and not change.deletions
    assert result.reference[0].passed and result.start is not None and not result.start.passed


def test_an_id_not_collected_fails_the_grade_named_as_such(suite: Path, tmp_path: Path) -> None:
    task = load_task(suite / FIX_551)  # on the older base commit
    ids = [f"{TEST_FILE}::test_isiterable", f"{TEST_FILE}::test_no_such_test"]
    verdict = grade(task, task.repo, tmp_path, ids=ids)  # the start: the first fails too
    assert not verdict.passed
    assert verdict.failing == (
        f"{TEST_FILE}::test_no_such_test (not collected)",
        "toolz.tests.test_itertoolz::test_isiterable",
    )
    assert (verdict.tests, verdict.failures) == (2, 2)


def test_a_bad_instance_is_refused_in_one_line(clone: tuple[Path, Path], tmp_path: Path) -> None:
    good = json.loads(clone[1].read_text(encoding="utf-8").splitlines()[1])
    missing = {**good, "instance_id": "missing-base", "base_commit": "0" * 40}
    no_test = {**good, "instance_id": "no-test", "FAIL_TO_PASS": [f"{TEST_FILE}::test_nope"]}
    file = tmp_path / "bad.json"
    unittest = {**good, "instance_id": "unittest", "PASS_TO_PASS": '["test_a (tests.T)"]'}
    # A JSON list this time (the fixture's are JSON lines), written over many lines.
    file.write_text(json.dumps([missing, no_test, unittest], indent=2), encoding="utf-8")
    done = run_ssw_cli(
        [
            "bench",
            "import",
            "swebench",
            str(file),
            "--repo",
            str(clone[0]),
            "--out",
            str(tmp_path / "o"),
        ],
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"refused missing-base: base commit {'0' * 40} is not in the clone at {clone[0]}: fetch "
        f"it there (git fetch origin {'0' * 40})",
        f"refused no-test: FAIL_TO_PASS id '{TEST_FILE}::test_nope': {TEST_FILE} defines no "
        "test test_nope",
        "refused unittest: PASS_TO_PASS: 'test_a (tests.T)' is not a pytest id "
        "(path/test_x.py::test_y): only projects tested by pytest are taken",
    ]
    assert done.stdout.endswith("0 of 3 tasks written; check them with ssw bench validate\n")
    assert not (tmp_path / "o" / "missing-base").exists()


# At import, the graded code rewrites the hidden test file into one that passes.
REWRITES_THE_TEST = """
import pathlib

try:
    (pathlib.Path(__file__).parent / "tests" / "test_itertoolz.py").write_text(
        "def test_partition_all():\\n    pass\\n"
    )
except OSError:
    pass
"""


@pytest.mark.parametrize("backend", ["none", "bwrap"])
def test_graded_code_cannot_rewrite_the_overlaid_tests_in_the_sandbox(
    suite: Path, tmp_path: Path, backend: str
) -> None:
    from stepswitch.util.sandbox import choose_sandbox

    try:
        sandbox = None if backend == "none" else choose_sandbox(backend)
    except UsageError as exc:
        pytest.skip(str(exc))
    task = load_task(suite / FIX_603)
    tree = tmp_path / "tree"
    shutil.copytree(task.repo, tree)
    init = tree / "toolz/__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + REWRITES_THE_TEST, encoding="utf-8")
    verdict = grade(task, tree, tmp_path, sandbox, ids=task.spec.tests.fail_to_pass)
    # The control: unconfined, the rewritten file is what pytest collects, and it passes.
    assert verdict.passed is (backend == "none"), verdict.summary()
