"""`ssw bench import harbor` of tasks ssw did not export: a plain Python image with pip
requirements becomes an ssw task that validate accepts, read without running any of the task's
scripts; every other shape is refused with its reason, task by task."""

from __future__ import annotations

import importlib.metadata
import subprocess
import tempfile
from pathlib import Path

import pytest

from stepswitch.bench.harbor import export_suite, import_harbor
from stepswitch.bench.oracle import reference_change
from stepswitch.bench.task import HIDDEN_ONLY_NOTE, load_suite, load_task
from stepswitch.bench.validate import validate_tasks
from tests.harness.cli import run_ssw_cli

REPO = Path(__file__).resolve().parents[2]
HARBOR_PYTHON = REPO / ".venv-harbor/bin/python"
YAML = f"pyyaml=={importlib.metadata.version('pyyaml')}"  # installed beside ssw

STUB = "def count_words(text):\n    return len(text.split(' '))\n"
FIXED = "def count_words(text):\n    return len(text.split())\n"

FILES = {
    "instruction.md": "count_words in /app/wordcount.py miscounts text with runs of spaces or "
    "newlines. Fix it.\n",
    "task.toml": 'version = "1.0"\n\n[metadata]\ndifficulty = "easy"\n\n[verifier]\n'
    "timeout_sec = 120.0\n\n[agent]\ntimeout_sec = 600.0\n",
    "environment/Dockerfile": "FROM python:3.12-slim\nENV PYTHONUNBUFFERED=1\nWORKDIR /app\n"
    "COPY src/ /app/\nCOPY requirements.txt /app/\n"
    "RUN pip install --no-cache-dir \\\n    -r requirements.txt\n",
    "environment/requirements.txt": f"{YAML}\npytest==8.4.1  # the tests\n",
    "environment/src/wordcount.py": STUB,
    "environment/src/test_wordcount.py": "from wordcount import count_words\n\n\n"
    "def test_one_word():\n    assert count_words('hello') == 1\n",
    "tests/test.sh": "#!/bin/bash\napt-get update && apt-get install -y curl python3\n"
    "curl -LsSf https://astral.sh/uv/0.9.7/install.sh | sh\nsource $HOME/.local/bin/env\n"
    "uvx \\\n  -p 3.12 \\\n  -w pytest==8.4.1 \\\n  -w pytest-json-ctrf==0.3.5 \\\n"
    "  pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA\n"
    "if [ $? -eq 0 ]; then\n  echo 1 > /logs/verifier/reward.txt\nelse\n"
    "  echo 0 > /logs/verifier/reward.txt\nfi\n",
    "tests/test_outputs.py": "import json\nfrom pathlib import Path\n\n"
    "from wordcount import count_words\n\n\ndef test_the_file_is_there():\n"
    '    assert Path("/app/wordcount.py").is_file()\n\n\ndef test_counts():\n'
    "    cases = json.loads(Path('/tests/cases.json').read_text())\n"
    "    for text, n in cases:\n        assert count_words(text) == n\n",
    "tests/cases.json": '[["a  b", 2], ["a\\nb c", 3], ["", 0]]\n',
    "solution/solve.sh": "#!/bin/bash\nset -e\ncd /app\n"
    f"cat > /app/wordcount.py << 'EOF'\n{FIXED}EOF\n",
}


def write_task(folder: Path, **changes: str) -> Path:
    for rel, text in {**FILES, **changes}.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def test_a_plain_python_task_becomes_an_ssw_task_that_validates(tmp_path: Path) -> None:
    write_task(tmp_path / "harbor/Word-Count")
    [found] = import_harbor(tmp_path / "harbor", tmp_path / "back")
    assert (found.name, found.why) == ("Word-Count", "")
    task = load_task(tmp_path / "back/word-count")
    assert task.spec.requires == (YAML,)  # pytest and its report plugin are ssw's own
    assert task.spec.tests.command == "python -m pytest -q -p no:cacheprovider " + (
        ".ssw_hidden/test_outputs.py"
    )
    assert (task.spec.tests.timeout_s, task.spec.limits.task_timeout_s) == (120.0, 600.0)
    assert sorted(p.name for p in task.repo.iterdir()) == [
        "requirements.txt",
        "test_wordcount.py",
        "wordcount.py",
    ]
    hidden = (task.hidden_tests / "test_outputs.py").read_text()
    assert 'Path("wordcount.py")' in hidden and "Path('.ssw_hidden/cases.json')" in hidden
    assert "count_words in wordcount.py" in task.instruction
    [result] = validate_tasks([task])
    assert result.valid, result.problem
    assert result.start is not None and result.start.failures == 1  # test_counts
    assert result.reference[0].tests == 2


@pytest.mark.skipif(not HARBOR_PYTHON.exists(), reason="no Harbor venv (Python 3.12)")
def test_the_fixture_is_a_task_harbors_own_loader_takes(tmp_path: Path) -> None:
    folder = write_task(tmp_path / "word-count")
    load = "import sys\nfrom harbor.models.task.task import Task\nTask(sys.argv[1])"
    done = subprocess.run([str(HARBOR_PYTHON), "-c", load, str(folder)], capture_output=True)
    assert done.returncode == 0, done.stderr


REFUSED = {
    "apt": (
        {
            "environment/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\n"
            "RUN apt-get install -y gcc\n"
        },
        "environment/Dockerfile runs 'apt-get install -y gcc': only pip install is read",
    ),
    "ubuntu": (
        {"environment/Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\n"},
        "environment/Dockerfile does not start FROM python:<tag>",
    ),
    "outside": (
        {"environment/Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY ../secret /app/\n"},
        "'../secret' is not a file of its folder",
    ),
    "script": (
        {"solution/solve.sh": "#!/bin/bash\npython3 /solution/fix.py\n"},
        "solution/solve.sh runs 'python3 /solution/fix.py': only writes of files are read",
    ),
    "expands": (
        {"solution/solve.sh": "cat > wordcount.py <<EOF\nx = $HOME\nEOF\n"},
        "expands variables",
    ),
    "scored": (
        {"tests/test.sh": FILES["tests/test.sh"] + "python3 << 'R'\nprint(1)\nR\n"},
        "tests/test.sh runs Python beside pytest",
    ),
    "selects": (
        {"tests/test.sh": "pytest /tests/test_outputs.py -k counts\necho 1 > reward.txt\n"},
        "pytest argument '-k' is not read",
    ),
    "bad-requirement": (
        {"environment/requirements.txt": "git+https://example.com/x.git\n"},
        "requirement 'git+https://example.com/x.git' is not a name or name==version",
    ),
}


# Most Harbor tasks: the image holds the code alone, the tests are the verifier's.
NO_VISIBLE = {
    "environment/Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY src/wordcount.py /app/\n"
}


def test_a_start_without_tests_is_judged_by_its_hidden_tests_and_told_so(tmp_path: Path) -> None:
    write_task(tmp_path / "harbor/no-visible", **NO_VISIBLE)
    [found] = import_harbor(tmp_path / "harbor", tmp_path / "back")
    assert (found.name, found.why) == ("no-visible", "")
    task = load_task(tmp_path / "back/no-visible")
    assert [p.name for p in task.repo.iterdir()] == ["wordcount.py"] and not task.visible_tests
    assert task.brief == f"{task.instruction.rstrip()}\n\n{HIDDEN_ONLY_NOTE}"
    [result] = validate_tasks([task])
    assert result.valid, result.problem
    checks = {c.name: c.found for c in result.checks}
    assert checks["start_visible"] == "no visible tests: the hidden tests alone judge the task"
    assert checks["start_fails_hidden"].startswith("1 failed")  # test_counts
    # Exported, a Harbor agent is told so too; imported back, the instruction is as it was.
    export_suite(tmp_path / "back", tmp_path / "exported")
    told = (tmp_path / "exported/no-visible/instruction.md").read_text()
    assert told == task.brief
    import_harbor(tmp_path / "exported", tmp_path / "again")
    assert load_task(tmp_path / "again/no-visible").instruction == task.instruction


def test_every_other_shape_is_refused_with_its_reason_and_the_rest_written(
    tmp_path: Path,
) -> None:
    for name, (changes, _) in REFUSED.items():
        write_task(tmp_path / "harbor" / name, **changes)
    write_task(tmp_path / "harbor/taken")
    found = {t.name: t for t in import_harbor(tmp_path / "harbor", tmp_path / "back")}
    for name, (_, why) in REFUSED.items():
        assert found[name].folder is None and why in found[name].why, (name, found[name].why)
        assert not (tmp_path / "back" / name).exists()
    assert found["taken"].folder == tmp_path / "back/taken"


def test_packages_the_verifier_installs_are_requirements_too(tmp_path: Path) -> None:
    test_sh = (
        "#!/bin/bash\npip install pytest>=8 ssw-no-such-package==1.0\n"
        "python3 -m pytest /tests/test_outputs.py -rA\n"
        "if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; "
        "else echo 0 > /logs/verifier/reward.txt; fi\n"
    )
    write_task(tmp_path / "harbor/t", **{"tests/test.sh": test_sh})
    [found] = import_harbor(tmp_path / "harbor", tmp_path / "back")
    assert found.folder is not None, found.why
    assert load_task(found.folder).spec.requires == (YAML, "ssw-no-such-package==1.0")


def test_a_task_whose_requirement_is_missing_cannot_be_judged(tmp_path: Path) -> None:
    write_task(
        tmp_path / "harbor/needs",
        **{"environment/requirements.txt": "ssw-no-such-package==1.0\n"},
    )
    import_harbor(tmp_path / "harbor", tmp_path / "back")
    [result] = validate_tasks(load_suite(tmp_path / "back"))
    assert result.problem == (
        "cannot judge: the task requires ssw-no-such-package==1.0 (not installed) beside ssw; "
        "install it there"
    )
    assert result.start is None  # no test was run to blame the task's code


def test_requirements_travel_through_an_export_and_back(tmp_path: Path) -> None:
    write_task(tmp_path / "harbor/word-count")
    import_harbor(tmp_path / "harbor", tmp_path / "suite")
    export_suite(tmp_path / "suite", tmp_path / "out")
    dockerfile = (tmp_path / "out/word-count/environment/Dockerfile").read_text()
    assert f"RUN pip install --no-cache-dir pytest==9.2.0 {YAML}\n" in dockerfile
    [back] = import_harbor(tmp_path / "out", tmp_path / "again")
    assert back.folder is not None and load_task(back.folder).spec.requires == (YAML,)


def test_the_cli_reports_what_it_took_and_what_it_refused(tmp_path: Path) -> None:
    write_task(tmp_path / "harbor/taken")
    write_task(tmp_path / "harbor/apt", **REFUSED["apt"][0])
    done = run_ssw_cli(["bench", "import", "harbor", "harbor", "--out", "b"], cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "1 of 2 tasks written" in done.stdout
    assert "apt: environment/Dockerfile runs 'apt-get install -y gcc'" in done.stdout + done.stderr


@pytest.mark.parametrize(
    "solve",
    [
        "cat > /app/../../../escaped.txt << 'EOF'\nx\nEOF\n",
        "cat > ../../../escaped.txt << 'EOF'\nx\nEOF\n",
        "rm -f /app/../../../escaped.txt\ncat > wordcount.py << 'EOF'\nx = 1\nEOF\n",
    ],
)
def test_a_solution_that_writes_or_removes_outside_the_work_folder_touches_nothing(
    tmp_path: Path, solve: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "a/b/c/d"
    work.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(work))  # the import's scratch folders
    kept = [folder / "escaped.txt" for folder in (work, *work.parents[:3])]  # d, c, b, a
    for path in kept:
        path.write_text("keep")
    write_task(work / "harbor/t", **{"solution/solve.sh": solve})
    [found] = import_harbor(work / "harbor", work / "back")
    assert sorted(tmp_path.rglob("escaped.txt")) == sorted(set(kept))
    assert all(path.read_text() == "keep" for path in kept)
    assert found.folder is None and "outside the work folder" in found.why, found.why


def test_a_start_and_solution_without_a_last_newline_give_a_patch_that_applies_exactly(
    tmp_path: Path,
) -> None:
    """The reference patch is git's own diff: right already before issue 46; kept so."""
    fixed = FIXED.removesuffix("\n")
    write_task(
        tmp_path / "harbor/t",
        **{
            "environment/src/wordcount.py": STUB.removesuffix("\n"),
            "solution/wordcount.py": fixed,
            "solution/solve.sh": "#!/bin/bash\ncp /solution/wordcount.py /app/wordcount.py\n",
        },
    )
    [found] = import_harbor(tmp_path / "harbor", tmp_path / "back")
    assert found.folder is not None, found.why
    task = load_task(found.folder)
    assert reference_change(task, task.repo, tmp_path / "scratch").writes == {"wordcount.py": fixed}


RUN = "pytest /tests/test_outputs.py -rA"
IF_PASSED = "if [ $? -eq 0 ]; then echo 1 > {r}; else echo 0 > {r}; fi\n"
REWARD = "/logs/verifier/reward.txt"


@pytest.mark.parametrize(
    "test_sh",
    [
        # the reward written whatever pytest says (issue 46)
        f"{RUN}\necho 1 > {REWARD}\n",
        f"echo 1 > {REWARD}\n{RUN}\n" + IF_PASSED.format(r=REWARD),
        f"{RUN}\n" + IF_PASSED.format(r=REWARD) + f"echo 1 > {REWARD}\n",
        f"{RUN}\nif [ $? -eq 0 ]; then echo 0 > {REWARD}; else echo 1 > {REWARD}; fi\n",
        # the status tested is tee's, or turned round, or true's
        f"{RUN} 2>&1 | tee /logs/verifier/out.txt\n" + IF_PASSED.format(r=REWARD),
        f"if ! {RUN}; then echo 1 > {REWARD}; else echo 0 > {REWARD}; fi\n",
        f"true || {RUN}\n" + IF_PASSED.format(r=REWARD),
    ],
)
def test_a_test_sh_whose_reward_is_not_pytests_exit_is_refused_naming_the_task(
    tmp_path: Path, test_sh: str
) -> None:
    """Control: before issue 46 each of these was imported as a task graded by pytest."""
    write_task(tmp_path / "harbor/scored", **{"tests/test.sh": "#!/bin/bash\n" + test_sh})
    done = run_ssw_cli(["bench", "import", "harbor", "harbor", "--out", "b"], cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("refused scored: tests/test.sh"), line
    assert "exit status" in line, line
    assert not (tmp_path / "b/scored").exists()


@pytest.mark.parametrize(
    "test_sh",
    [
        f"{RUN} --ctrf=/logs/verifier/ctrf.json 2>&1\n" + IF_PASSED.format(r=REWARD),
        f"{RUN} --junitxml /logs/verifier/junit.xml > /logs/verifier/out.txt 2>&1\n"
        + IF_PASSED.format(r=REWARD),
        f"set -euo pipefail\n{RUN} -v 2>&1 | tee -a /logs/verifier/out.txt\n"
        + IF_PASSED.format(r=REWARD),
        f'{RUN} --tb=short\nstatus=$?\nif [ "$status" -eq 0 ]; then\n  echo 1 > {REWARD}\n'
        f"else\n  echo 0 > {REWARD}\nfi\nexit 0\n",
        f"if timeout 60 {RUN}; then\n  echo 1 > {REWARD}\nelse\n  echo 0 > {REWARD}\nfi\n",
        f"{RUN}  # the tests\nif [ $? -eq 0 ]; then  # passed\n  echo 1 > {REWARD}\n"
        f"else\n  echo 0 > {REWARD}  # failed\nfi # done\n",
    ],
)
def test_ordinary_options_and_redirections_of_the_pytest_run_are_read(
    tmp_path: Path, test_sh: str
) -> None:
    """Control: before issue 46 all but the `status=$?` one were refused (`--ctrf=FILE`, `2>&1`,
    `>`, a pipe, `if pytest`, a comment after the pytest run)."""
    write_task(tmp_path / "harbor/t", **{"tests/test.sh": "#!/bin/bash\n" + test_sh})
    [found] = import_harbor(tmp_path / "harbor", tmp_path / "back")
    assert found.folder is not None, found.why
    command = load_task(found.folder).spec.tests.command
    assert command == "python -m pytest -q -p no:cacheprovider .ssw_hidden/test_outputs.py"
