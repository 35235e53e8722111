"""`ssw bench import pairs --buggy DIR --correct DIR --tests DIR`: buggy/correct program pairs
with JSON test data become tasks `ssw bench validate` accepts; a program it cannot take is
refused with its reason and the others are written (issue 24). The programs are written here."""

from __future__ import annotations

import subprocess
from pathlib import Path

from stepswitch.bench.oracle import reference_change
from stepswitch.bench.pairs import import_pairs
from stepswitch.bench.task import load_suite
from stepswitch.bench.validate import validate_tasks
from tests.harness.cli import run_ssw_cli

PROGRAMS = {
    # name: (buggy, correct, test data)
    "gcd": (
        "def gcd(a, b):\n    if b == 0:\n        return a\n    return gcd(a % b, b)\n",
        "def gcd(a, b):\n    if b == 0:\n        return a\n    return gcd(b, a % b)\n",
        "[[35, 21], 7]\n[[13, 13], 13]\n[[17, 0], 17]\n",
    ),
    "is_even": (
        "def is_even(n):\n    return n % 2 == 1\n",
        "def is_even(n):\n    return n % 2 == 0\n",
        "[[2], true]\n[[3], false]\n",
    ),
    "no_data": ("def no_data():\n    return 1\n", "def no_data():\n    return 2\n", None),
    "bad_data": (
        "def bad_data(x):\n    return x\n",
        "def bad_data(x):\n    return -x\n",
        "[1, 2, 3]\n",
    ),
    "renamed": ("def renamed():\n    return 1\n", "def other():\n    return 2\n", "[[], 2]\n"),
}


def _sets(root: Path) -> tuple[Path, Path, Path]:
    folders = buggy, correct, tests = root / "buggy", root / "correct", root / "json"
    for folder in folders:
        folder.mkdir(parents=True)
    for name, (before, after, data) in PROGRAMS.items():
        (buggy / f"{name}.py").write_text(before, encoding="utf-8")
        (correct / f"{name}.py").write_text(after, encoding="utf-8")
        if data is not None:
            (tests / f"{name}.json").write_text(data, encoding="utf-8")
    return folders


def test_pairs_become_valid_tasks_and_those_it_cannot_take_say_why(tmp_path: Path) -> None:
    found = import_pairs(*_sets(tmp_path), tmp_path / "suite")

    assert [(p.name, p.why) for p in found] == [
        ("bad_data", "bad_data.json line 1 is not [[args], expected]"),
        ("gcd", ""),
        ("is_even", ""),
        ("no_data", "no test data no_data.json"),
        ("renamed", "the correct program defines no function renamed"),
    ]
    tasks = load_suite(tmp_path / "suite")
    assert [t.spec.id for t in tasks] == ["gcd", "is-even"]
    assert (tasks[0].hidden_tests / "gcd.json").is_file()  # the data is hidden with the test
    assert not (tasks[0].repo / "gcd.json").exists()
    verdicts = validate_tasks(tasks, jobs=2)
    assert [(v.task, v.valid, v.problem) for v in verdicts] == [
        ("suite/gcd", True, None),
        ("suite/is-even", True, None),
    ]


def test_the_command_names_what_is_missing_in_one_line(tmp_path: Path) -> None:
    buggy, correct, tests = _sets(tmp_path)

    def ssw(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return run_ssw_cli(["bench", "import", "pairs", *map(str, args)], timeout=60)

    missing = ssw("--buggy", buggy, "--out", tmp_path / "out")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    assert "give --correct, --tests" in missing.stderr
    done = ssw("--buggy", buggy, "--correct", correct, "--tests", tests, "--out", tmp_path / "o")
    assert done.returncode == 1  # three refused
    assert done.stderr.count("refused ") == 3
    assert done.stdout.endswith("2 of 5 tasks written; check them with ssw bench validate\n")


def test_a_program_without_a_last_newline_gives_a_patch_that_applies_exactly(
    tmp_path: Path,
) -> None:
    """Control: before the fix the reference patch of such a pair did not apply."""
    buggy, correct, tests = _sets(tmp_path / "src")
    after = "def is_even(n):\n    return n % 2 == 0"
    (buggy / "is_even.py").write_text("def is_even(n):\n    return n % 2 == 1", encoding="utf-8")
    (correct / "is_even.py").write_text(after, encoding="utf-8")
    import_pairs(buggy, correct, tests, tmp_path / "suite")
    task = next(t for t in load_suite(tmp_path / "suite") if t.spec.id == "is-even")
    change = reference_change(task, task.repo, tmp_path / "scratch")
    assert change.writes == {"is_even.py": after}
