from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from stepswitch.bench.grading_folder import TestVerdict, grade, run_pytest
from stepswitch.bench.grading_layout import lay_out
from stepswitch.bench.task import HIDDEN_FOLDER, load_task
from stepswitch.util.git_checkouts import checkout_tree
from tests.bench import FIXED, write_task
from tests.harness.repo import commit_all, git


@pytest.fixture
def task(tmp_path):
    return load_task(write_task(tmp_path))


def agent_tree(task, tmp_path, files: dict[str, str | None]):
    """The task's start with the agent's edits (None: the agent deleted the file)."""
    tree = tmp_path / "tree"
    shutil.copytree(task.repo, tree)
    for rel, text in files.items():
        if text is None:
            (tree / rel).unlink()
        else:
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (tree / rel).write_text(text)
    return tree


def test_layout_puts_back_test_files_and_removes_what_could_fake_a_pass(task, tmp_path):
    tree = agent_tree(
        task,
        tmp_path,
        {
            "calc.py": FIXED,
            "tests/test_calc.py": None,
            "conftest.py": "collect_ignore_glob = ['*']\n",
            "pytest.py": "raise SystemExit(0)\n",
            ".pytest.ini": "[pytest]\naddopts = -p agent_plugin\n",
            f"{HIDDEN_FOLDER}/test_fake.py": "def test_ok():\n    pass\n",
        },
    )
    dest = tmp_path / "grading"
    changed = lay_out(task, tree, dest)
    assert (dest / "tests" / "test_calc.py").read_text() == (
        task.repo / "tests/test_calc.py"
    ).read_text()
    assert not (dest / "conftest.py").exists()
    assert not (dest / "pytest.py").exists()
    assert not (dest / ".pytest.ini").exists()
    assert sorted(p.name for p in (dest / HIDDEN_FOLDER).iterdir()) == ["test_hidden.py"]
    assert "restored tests/test_calc.py" in changed
    assert "removed conftest.py" in changed


def test_pytest_configuration_comes_from_the_start(task, tmp_path):
    pyproject = '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "--deselect x"\n'
    tree = agent_tree(task, tmp_path, {"pyproject.toml": pyproject})
    dest = tmp_path / "grading"
    lay_out(task, tree, dest)
    text = (dest / "pyproject.toml").read_text()
    assert "deselect" not in text
    assert 'name = "x"' in text


def test_a_conftest_that_skips_everything_does_not_pass_the_grade(task, tmp_path):
    tree = agent_tree(
        task,
        tmp_path,
        {
            "conftest.py": (
                "import pytest\n\ndef pytest_runtest_setup(item):\n    pytest.skip('no')\n"
            )
        },
    )
    verdict = grade(task, tree, tmp_path)
    assert not verdict.passed
    assert verdict.failures == 1


def test_grade_of_the_committed_tree_ignores_uncommitted_edits(task, tmp_path):
    repo = agent_tree(task, tmp_path, {"calc.py": FIXED})
    git(repo, "init", "-q")
    commit_all(repo)
    (repo / "calc.py").write_text("def add(a, b):\n    return 0\n")
    tree = checkout_tree(repo)
    assert tree is not None
    tree.check_out("HEAD", tmp_path / "exported")
    verdict = grade(task, tmp_path / "exported", tmp_path)
    assert verdict.passed, verdict.output
    assert verdict.summary() == "1 passed"


def _graded(tmp_path: Path, test_file: str) -> TestVerdict:
    """`python -m pytest -q TEST_FILE` in tmp_path/work as grading runs it, scratch beside."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    return run_pytest(
        ["python", "-m", "pytest", "-q", test_file],
        tmp_path / "work",
        per_test_timeout_s=10,
        timeout_s=60,
        scratch=scratch,
    )


def test_tests_run_with_a_scrubbed_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("PYTEST_ADDOPTS", "--collect-only")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "test_env.py").write_text(
        "import os, sys\n\n"
        "def test_env():\n"
        "    assert 'OPENAI_API_KEY' not in os.environ\n"
        "    assert set(os.environ) <= {'PATH', 'HOME', 'LANG', 'TMPDIR', 'PYTHONPATH',\n"
        "        'PYTHONDONTWRITEBYTECODE', 'PYTHONHASHSEED', 'PYTEST_DISABLE_PLUGIN_AUTOLOAD',\n"
        "        'PYTEST_CURRENT_TEST', 'PYTEST_VERSION'}\n"
        "    assert os.environ['PYTHONHASHSEED'] == '0'\n"
        "    assert os.environ['PATH'].split(os.pathsep)[0] == os.path.dirname(sys.executable)\n"
    )
    verdict = _graded(tmp_path, "test_env.py")
    assert verdict.passed, verdict.output


def test_no_installed_plugin_loads_unless_the_command_names_it(tmp_path):
    """What is installed beside ssw is not the task's environment (in ssw's own, anyio's plugin
    was half of every graded run's start-up)."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "test_plugins.py").write_text(
        "def test_only_builtin_plugins(pytestconfig):\n"
        "    assert pytestconfig.pluginmanager.list_plugin_distinfo() == []\n"
        "    assert pytestconfig.pluginmanager.has_plugin('ssw_grading_timeout')\n"
    )
    verdict = _graded(tmp_path, "test_plugins.py")
    assert verdict.passed, verdict.output


def test_report_is_written_outside_the_graded_folder(task, tmp_path):
    tree = agent_tree(task, tmp_path, {"calc.py": FIXED})
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    grade(task, tree, scratch)
    reports = list(scratch.glob("run-*/report.xml"))
    assert len(reports) == 1
    assert not list((scratch).glob("grading-*/repo/**/*.xml"))


def test_collection_error_counts_as_a_failure(task, tmp_path):
    tree = agent_tree(task, tmp_path, {"calc.py": "def double(x):\n    return 2 * x\n"})
    verdict = grade(task, tree, tmp_path)
    assert verdict.failed and not verdict.passed
    assert verdict.errors == 1
