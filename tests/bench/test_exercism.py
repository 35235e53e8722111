"""`ssw bench import exercism DIR`: exercises in Exercism's Python layout (stub, tests, example
solution, instructions) become tasks that `ssw bench validate` accepts; one it cannot take is
refused with its reason and the others are written (issue 24). The exercises are written here."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from stepswitch.bench.exercism import import_exercism
from stepswitch.bench.import_source import LINKS_NOT_FOLLOWED
from stepswitch.bench.oracle import reference_change
from stepswitch.bench.task import load_suite
from stepswitch.bench.validate import validate_tasks
from tests.harness.cli import run_ssw_cli


def _exercise(root: Path, slug: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / slug / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _exercises(root: Path) -> Path:
    _exercise(
        root,
        "two-fer",
        {
            ".docs/instructions.md": "# Two-fer\n\nReturn `One for X, one for me.`\n",
            ".docs/instructions.append.md": "Without a name, X is `you`.\n",
            "two_fer.py": "def two_fer(name='you'):\n    pass\n",
            "two_fer_test.py": (
                "from two_fer import two_fer\n\n\ndef test_a_name():\n"
                "    assert two_fer('Alice') == 'One for Alice, one for me.'\n\n\n"
                "def test_no_name():\n    assert two_fer() == 'One for you, one for me.'\n"
            ),
            ".meta/example.py": (
                "def two_fer(name='you'):\n    return f'One for {name}, one for me.'\n"
            ),
        },
    )
    # Its files named by .meta/config.json, as the track does.
    _exercise(
        root,
        "leap",
        {
            ".docs/instructions.md": "Is the year a leap year?\n",
            ".meta/config.json": json.dumps(
                {
                    "files": {
                        "solution": ["leap.py"],
                        "test": ["leap_test.py"],
                        "example": [".meta/solution.py"],
                    }
                }
            ),
            "leap.py": "def leap_year(year):\n    pass\n",
            "leap_test.py": (
                "from leap import leap_year\n\n\ndef test_2000():\n    assert leap_year(2000)\n\n\n"
                "def test_1900():\n    assert not leap_year(1900)\n"
            ),
            ".meta/solution.py": (
                "def leap_year(year):\n"
                "    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n"
            ),
        },
    )
    _exercise(
        root,
        "no-example",
        {
            ".docs/instructions.md": "Nothing to compare with.\n",
            "no_example.py": "def f():\n    pass\n",
            "no_example_test.py": "from no_example import f\n\n\ndef test_f():\n    assert f()\n",
        },
    )
    return root


def test_exercises_become_valid_tasks_and_one_without_an_example_is_refused(
    tmp_path: Path,
) -> None:
    found = import_exercism(_exercises(tmp_path / "practice"), tmp_path / "suite")

    assert [(e.name, e.why) for e in found] == [
        ("leap", ""),
        ("no-example", "no example solution file .meta/example.py"),
        ("two-fer", ""),
    ]
    tasks = load_suite(tmp_path / "suite")
    assert [t.spec.id for t in tasks] == ["leap", "two-fer"]
    two_fer = tasks[1]
    assert "Without a name, X is `you`." in two_fer.instruction
    assert "Write your solution in `two_fer.py`" in two_fer.instruction
    assert (two_fer.hidden_tests / "two_fer_test.py").is_file()
    assert not (two_fer.repo / "two_fer_test.py").exists()  # the tests are hidden
    verdicts = validate_tasks(tasks, jobs=2)
    assert [(v.task, v.valid, v.problem) for v in verdicts] == [
        ("suite/leap", True, None),
        ("suite/two-fer", True, None),
    ]


def _import(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    command = ["bench", "import", "exercism", str(source), "--out", str(out)]
    return run_ssw_cli(command, timeout=60)


def test_the_command_writes_what_it_can_says_what_it_refused_and_exits_1(tmp_path: Path) -> None:
    source = _exercises(tmp_path / "practice")
    result = _import(source, tmp_path / "out")
    assert result.returncode == 1
    assert result.stderr == "refused no-example: no example solution file .meta/example.py\n"
    assert result.stdout.endswith("2 of 3 tasks written; check them with ssw bench validate\n")
    again = _import(tmp_path / "nowhere", tmp_path / "out2")
    assert again.returncode == 2 and again.stderr.count("\n") == 1
    assert "no such folder of exercises" in again.stderr


def test_a_config_that_names_a_file_outside_the_exercise_or_a_link_is_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "secret.py").write_text("KEY = 1\n", encoding="utf-8")
    files = {"solution": ["x.py"], "test": ["x_test.py"], "example": ["../../secret.py"]}
    _exercise(tmp_path / "ex", "outside", {
        ".docs/instructions.md": "x\n",
        ".meta/config.json": json.dumps({"files": files}),
        "x.py": "", "x_test.py": "",
    })  # fmt: skip
    _exercise(tmp_path / "ex", "linked", {".docs/instructions.md": "x\n", "linked_test.py": ""})
    (tmp_path / "ex" / "linked" / "linked.py").symlink_to(tmp_path / "secret.py")
    found = import_exercism(tmp_path / "ex", tmp_path / "suite")
    assert [(e.name, e.why) for e in found] == [
        ("linked", f"linked.py {LINKS_NOT_FOLLOWED}"),
        ("outside", "../../secret.py: a path outside the exercise"),
    ]
    assert not (tmp_path / "suite").exists() or not any((tmp_path / "suite").iterdir())


def test_a_stub_or_example_without_a_last_newline_gives_a_patch_that_applies_exactly(
    tmp_path: Path,
) -> None:
    """As Exercism's react and say: the stub ends without a newline. Control: before the
    fix the reference patch did not apply."""
    example = "def say(number):\n    return str(number)"  # nor has the example
    _exercise(
        tmp_path / "src",
        "say",
        {
            ".docs/instructions.md": "Say a number.\n",
            "say.py": "def say(number):\n    pass",
            "say_test.py": "from say import say\n\n\ndef test_one():\n    assert say(1) == '1'\n",
            ".meta/example.py": example,
        },
    )
    [found] = import_exercism(tmp_path / "src", tmp_path / "suite")
    [task] = load_suite(tmp_path / "suite")
    change = reference_change(task, task.repo, tmp_path / "scratch")
    assert found.why == "" and change.writes == {"say.py": example}


def test_helper_modules_come_along_and_unconditional_skips_go_as_exercism_runs_them(
    tmp_path: Path,
) -> None:
    """Before: the helper was not copied (the hidden tests could not import it) and the skip
    stayed (ssw fails a skipped hidden test), so the reference failed and the task was invalid."""
    tests = (
        "import unittest\n\nfrom meter import double\nfrom test_utils import twice\n\n\n"
        "class MeterTest(unittest.TestCase):\n    def test_one(self):\n"
        "        self.assertEqual(double(1), twice(1))\n\n"
        '    @unittest.skip("extra credit")\n    def test_large(self):\n'
        "        self.assertEqual(double(10**6), twice(10**6))\n"
    )
    config = {"files": {"solution": ["meter.py"], "test": ["meter_test.py"],
                        "example": [".meta/example.py"], "editor": ["test_utils.py"]}}  # fmt: skip
    _exercise(
        tmp_path / "practice",
        "meter",
        {
            ".docs/instructions.md": "# Meter\n\nDouble it.\n",
            ".meta/config.json": json.dumps(config),
            ".meta/example.py": "def double(n):\n    return 2 * n\n",
            "meter.py": "def double(n):\n    pass\n",
            "meter_test.py": tests,
            "test_utils.py": "def twice(n):\n    return n + n\n",
        },
    )
    import_exercism(tmp_path / "practice", tmp_path / "suite")
    (task,) = load_suite(tmp_path / "suite")
    hidden = (task.hidden_tests / "meter_test.py").read_text()
    assert "unittest.skip" not in hidden and "def test_large" in hidden
    assert (task.hidden_tests / "test_utils.py").is_file() and (
        task.repo / "test_utils.py"
    ).is_file()
    (verdict,) = validate_tasks([task], jobs=1)
    assert (verdict.valid, verdict.problem) == (True, None)
