"""Declared test data (`[tests] data` in task.toml): files of repo/ the hidden tests read are
put back from the task's start before they run, and stay read-only while the graded code runs;
`ssw bench validate` warns about a file the hidden tests name that no glob declares."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from stepswitch.bench.contestants import BuiltinContestant, Contestant
from stepswitch.bench.executor import inline_executor
from stepswitch.bench.grading_layout import lay_out
from stepswitch.bench.runner import BenchResult, BenchSpec, run_bench
from stepswitch.bench.task import covers, load_suite, load_task
from stepswitch.bench.validate import undeclared_data_reads, validate_task
from stepswitch.cli.bench import bench_app
from stepswitch.errors import ConfigError, UsageError
from stepswitch.util.sandbox import choose_sandbox

from . import BUGGY, TASK_TOML, patch_of, write_task
from .fakes import FakeContestant

RIGHT = json.dumps([{"args": [2, 3], "want": 5}]) + "\n"
WRONG = json.dumps([{"args": [2, 3], "want": -1}]) + "\n"  # what the buggy add gives
DECLARED = 'data = ["expected/*.json", "fixtures"]\n'

# Reads its expected outputs from the project's own data files, at the project's root.
READING = """
    import json
    from pathlib import Path

    from calc import add


    def check(name):
        for case in json.loads(Path(name).read_text()):
            assert add(*case["args"]) == case["want"]


    def test_add_gives_the_expected_outputs():  # a file among others of its folder
        check("expected/outputs.json")


    def test_add_passes_the_fixtures():  # a folder of data alone
        check("fixtures/cases.json")
"""

# At import in a grading folder (not in the agent's own gates), the buggy code rewrites the data
# to agree with it: in place, else by moving the folder away and writing a new one.
REWRITE_AT_IMPORT = (
    BUGGY
    + f"""
import os as _os

if _os.path.isdir(".ssw_hidden"):
    for _rel in ("expected/outputs.json", "fixtures/cases.json"):
        try:
            with open(_rel, "w") as _f:
                _f.write({WRONG!r})
        except OSError:
            _folder = _os.path.dirname(_rel)
            try:
                _os.rename(_folder, _folder + ".moved")
                _os.makedirs(_folder)
                with open(_rel, "w") as _f:
                    _f.write({WRONG!r})
            except OSError:
                pass
"""
)


def data_task(root: Path, name: str, declared: bool) -> Path:
    """A task whose hidden test reads expected/outputs.json and fixtures/cases.json from repo/;
    expected/ also holds a file that is not test data."""
    toml = TASK_TOML.format(name=name) + (DECLARED if declared else "")
    files: dict[str, str | bytes | None] = {
        "task.toml": toml,
        "repo/expected/outputs.json": RIGHT,
        "repo/expected/README.md": "The outputs add() must give.\n",
        "repo/fixtures/cases.json": RIGHT,
        "tests/test_hidden.py": READING,
    }
    return write_task(root, name, files)


# --- the model ---


def test_a_declared_glob_names_the_starts_files_it_matches(tmp_path: Path) -> None:
    task = load_task(data_task(tmp_path, "t", declared=True))
    assert task.spec.tests.data == ("expected/*.json", "fixtures")
    assert task.data_files == ("expected/outputs.json", "fixtures/cases.json")


def test_a_glob_covers_a_file_or_its_folder_and_a_star_stays_within_a_name() -> None:
    assert covers(["fixtures"], "fixtures/deep/a.json")
    assert covers(["fixtures/**"], "fixtures/deep/a.json")
    assert covers(["**/*.json"], "a/b/c.json") and covers(["**/*.json"], "c.json")
    assert not covers(["*.json"], "a/b.json")
    assert not covers(["expected/*.json"], "expected/README.md")
    assert not covers([], "expected/outputs.json")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ('["golden/*.json"]', "matches no file of repo/"),
        ('["../tests/test_hidden.py"]', "not a path inside repo/"),
        ('["/etc/passwd"]', "not a path inside repo/"),
    ],
)
def test_a_glob_outside_the_start_or_matching_nothing_is_a_config_error(
    tmp_path: Path, data: str, problem: str
) -> None:
    folder = data_task(tmp_path, "t", declared=False)
    (folder / "task.toml").write_text(TASK_TOML.format(name="t") + f"data = {data}\n")
    with pytest.raises(ConfigError) as caught:
        load_task(folder)
    assert caught.value.key == "tests.data[0]" and problem in str(caught.value)


def test_data_that_is_not_a_list_of_paths_is_a_config_error(tmp_path: Path) -> None:
    folder = data_task(tmp_path, "t", declared=False)
    (folder / "task.toml").write_text(TASK_TOML.format(name="t") + 'data = "expected"\n')
    with pytest.raises(ConfigError) as caught:
        load_task(folder)
    assert caught.value.key == "tests.data"


# --- the grading folder ---


def test_lay_out_puts_the_starts_data_back_and_removes_what_the_tree_added_beside_it(
    tmp_path: Path,
) -> None:
    task = load_task(data_task(tmp_path, "t", declared=True))
    tree = tmp_path / "tree"
    shutil.copytree(task.repo, tree)
    (tree / "expected" / "outputs.json").write_text(WRONG)
    (tree / "expected" / "README.md").write_text("the agent's notes\n")  # not data: kept
    (tree / "expected" / "more.json").write_text(WRONG)
    shutil.rmtree(tree / "fixtures")
    (tree / "fixtures").symlink_to("expected")  # a link inside the tree, in the data's place
    changed = lay_out(task, tree, tmp_path / "grading")
    grading = tmp_path / "grading"
    assert (grading / "expected" / "outputs.json").read_text() == RIGHT
    assert (grading / "expected" / "README.md").read_text() == "the agent's notes\n"
    assert not (grading / "expected" / "more.json").exists()
    assert not (grading / "fixtures").is_symlink()
    assert (grading / "fixtures" / "cases.json").read_text() == RIGHT
    assert "restored expected/outputs.json (declared test data)" in changed
    assert "removed expected/more.json (where test data is declared)" in changed


# --- through the bench, on each confining backend ---

CONTESTANTS: list[Contestant] = [
    BuiltinContestant("oracle"),
    FakeContestant(
        "rewrite", "write", files=(("expected/outputs.json", WRONG), ("fixtures/cases.json", WRONG))
    ),
    FakeContestant("at_import", "write", files=(("calc.py", REWRITE_AT_IMPORT),)),
]


@pytest.fixture(scope="module", params=["bwrap", "unshare"])
def benched(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> BenchResult:
    """Both tasks, declaring their data and not, each contestant once, on one backend."""
    try:
        choose_sandbox(request.param)
    except UsageError as exc:
        pytest.skip(str(exc))
    tmp = tmp_path_factory.mktemp(f"data-{request.param}")
    data_task(tmp, "declared", declared=True)
    data_task(tmp, "undeclared", declared=False)
    spec = BenchSpec(
        root=tmp / "runs" / "b1",
        tasks=load_suite(tmp / "suite"),
        contestants=CONTESTANTS,
        sandbox=request.param,
    )
    return run_bench(spec, executor=inline_executor, resamples=50)


def row_of(result: BenchResult, task: str, contestant: str) -> tuple[bool, str, str]:
    [row] = [r for r in result.rows if r.task == f"suite/{task}" and r.contestant == contestant]
    return row.passed, row.outcome, row.verdict


@pytest.mark.slow
def test_a_rewritten_expected_output_passes_only_where_the_data_is_not_declared(
    benched: BenchResult,
) -> None:
    # The control: the buggy add agrees with the outputs the agent wrote, and grading read them.
    assert row_of(benched, "undeclared", "rewrite") == (True, "done", "2 passed")
    assert row_of(benched, "declared", "rewrite") == (False, "done", "2 failed")


@pytest.mark.slow
def test_graded_code_cannot_rewrite_declared_data_while_the_hidden_tests_run(
    benched: BenchResult,
) -> None:
    # The control: undeclared, the file is the tree's and the graded code rewrites it at import.
    assert row_of(benched, "undeclared", "at_import") == (True, "done", "2 passed")
    # Declared, neither the file (read-only) nor its folder (a mount point, so it cannot be moved
    # away with the file inside) nor a folder of data alone (read-only) can be replaced.
    assert row_of(benched, "declared", "at_import") == (False, "done", "2 failed")


@pytest.mark.slow
def test_the_reference_passes_with_its_data_put_back(benched: BenchResult) -> None:
    assert row_of(benched, "declared", "oracle") == (True, "done", "2 passed")


# --- validate ---


def test_validate_warns_about_a_file_of_repo_the_hidden_tests_read_undeclared(
    tmp_path: Path,
) -> None:
    result = validate_task(load_task(data_task(tmp_path, "t", declared=False)))
    assert result.valid, result.problem  # a warning, not a failure
    [warning] = result.warnings
    assert warning.startswith("warning: the hidden tests name files of repo/")
    assert "test_hidden.py: expected/outputs.json, fixtures/cases.json" in warning
    assert result.checks[-1].name == "test_data_declared" and result.checks[-1].ok


def test_validate_does_not_warn_once_the_data_is_declared(tmp_path: Path) -> None:
    result = validate_task(load_task(data_task(tmp_path, "t", declared=True)))
    assert result.valid, result.problem
    assert result.warnings == ()
    assert result.checks[-1].found == "2 declared, no other file of repo/ named by the hidden tests"


def test_the_scan_finds_paths_spelt_as_literals_slash_chains_and_joins(tmp_path: Path) -> None:
    hidden = """
        import os
        from pathlib import Path

        ROOT = Path(__file__).parent.parent
        A = ROOT / "expected" / "outputs.json"
        B = os.path.join(os.path.dirname(__file__), "..", "fixtures")
        C = open("./notes/plan.txt")
        D = "calc.py"  # the change's code: reading it is what a structure test does
    """
    folder = data_task(tmp_path, "t", declared=False)
    (folder / "repo" / "notes").mkdir()
    (folder / "repo" / "notes" / "plan.txt").write_text("x\n")
    (folder / "tests" / "test_more.py").write_text(textwrap.dedent(hidden))
    reads = undeclared_data_reads(load_task(folder))
    assert reads["test_more.py"] == [
        "expected/outputs.json",
        "fixtures/cases.json",
        "notes/plan.txt",
    ]


def test_validate_refuses_a_reference_that_changes_declared_data(tmp_path: Path) -> None:
    folder = data_task(tmp_path, "t", declared=True)
    patch = patch_of("expected/outputs.json", RIGHT, WRONG)
    (folder / "solution" / "data.patch").write_text(patch)
    result = validate_task(load_task(folder))
    assert result.problem is not None
    assert "changes expected/outputs.json, declared test data" in result.problem


def cli(*args: str):  # type: ignore[no-untyped-def]
    app = typer.Typer()
    app.add_typer(bench_app, name="bench")
    return CliRunner().invoke(app, ["bench", *args])


def test_the_validation_record_keeps_the_warning_among_the_checks(tmp_path: Path) -> None:
    data_task(tmp_path, "t", declared=False)
    result = cli("validate", str(tmp_path / "suite"), "--json")
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.stdout)["tasks"]
    assert entry["valid"] is True
    [warned] = [c for c in entry["checks"] if c["warning"]]
    assert (warned["check"], warned["ok"]) == ("test_data_declared", True)
    assert "expected/outputs.json" in warned["found"]


def test_validate_refuses_a_declared_file_the_start_lacks_before_running_anything(
    tmp_path: Path,
) -> None:
    folder = data_task(tmp_path, "t", declared=True)
    (folder / "repo" / "fixtures" / "cases.json").unlink()
    result = cli("validate", str(folder))
    assert isinstance(result.exception, ConfigError) and result.exception.exit_code == 2
    assert result.exception.key == "tests.data[1]"
