"""`ssw bench import` reads only inside the folder it is given (issue 40): a task whose
instruction or test file is a link (to the user's ~/.netrc, say) is refused naming the link, and
nothing of the file it points to reaches a written task; the same for a FIFO, a file or a task
over the size caps. The ordinary task beside it is still written."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from stepswitch.bench.exercism import import_exercism
from stepswitch.bench.harbor import export_suite, import_harbor
from stepswitch.bench.import_source import FILE_CAP, LINKED_TASK, LINKS_NOT_FOLLOWED, TASK_CAP
from stepswitch.bench.pairs import import_pairs
from tests.bench.test_harbor_foreign import write_task
from tests.harness.cli import run_ssw_cli

MARKER = "machine api.example.com login me password MARKER-5f1d"
GENERAL = Path(__file__).resolve().parents[2] / "bench/suites/general"


def _netrc(tmp_path: Path) -> Path:
    """A stand-in for the user's ~/.netrc, outside every source folder."""
    netrc = tmp_path / "home" / ".netrc"
    netrc.parent.mkdir()
    netrc.write_text(f"{MARKER}\n", encoding="utf-8")
    return netrc


def _link(path: Path, target: Path) -> None:
    """path replaced by a link to target; asserted to lead there (the attack is in place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    path.symlink_to(target)
    assert MARKER in path.read_text(encoding="utf-8")


def _exercise(folder: Path, module: str) -> Path:
    files = {
        ".docs/instructions.md": f"Make {module} return 1.\n",
        f"{module}.py": "def f():\n    pass\n",
        f"{module}_test.py": f"from {module} import f\n\n\ndef test_f():\n    assert f() == 1\n",
        ".meta/example.py": "def f():\n    return 1\n",
    }
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


def _written(out: Path) -> str:
    """Every byte written under out, as text, to look for the marker in."""
    if not out.exists():
        return ""
    files = sorted(p for p in out.rglob("*") if p.is_file())
    return "".join(p.read_text(encoding="utf-8", errors="replace") for p in files)


def test_an_exercise_whose_instruction_links_to_the_netrc_is_refused_and_its_sibling_written(
    tmp_path: Path,
) -> None:
    netrc = _netrc(tmp_path)
    source = tmp_path / "practice"
    _exercise(source / "plain", "plain")
    _link(_exercise(source / "leaky", "leaky") / ".docs/instructions.md", netrc)

    found = import_exercism(source, tmp_path / "suite")

    assert [(e.name, e.why) for e in found] == [
        ("leaky", f".docs/instructions.md {LINKS_NOT_FOLLOWED}"),
        ("plain", ""),
    ]
    assert MARKER not in _written(tmp_path / "suite")
    assert (tmp_path / "suite/plain/instruction.md").is_file()


def test_an_instruction_hard_linked_to_the_netrc_is_refused(tmp_path: Path) -> None:
    netrc = _netrc(tmp_path)
    source = tmp_path / "practice"
    _exercise(source / "plain", "plain")
    instruction = _exercise(source / "leaky", "leaky") / ".docs/instructions.md"
    instruction.unlink()
    os.link(netrc, instruction)  # as an archive's hard link entry, extracted, would make it
    assert MARKER in instruction.read_text(encoding="utf-8")

    found = import_exercism(source, tmp_path / "suite")

    assert [(e.name, e.why.split(":")[0]) for e in found] == [
        ("leaky", ".docs/instructions.md has 2 hard links"),
        ("plain", ""),
    ]
    assert MARKER not in _written(tmp_path / "suite")


def test_a_link_to_a_file_inside_the_exercise_is_refused_too(tmp_path: Path) -> None:
    source = tmp_path / "practice"
    leaky = _exercise(source / "leaky", "leaky")
    (leaky / ".docs/instructions.md").unlink()
    (leaky / ".docs/instructions.md").symlink_to("../.meta/example.py")

    (found,) = import_exercism(source, tmp_path / "suite")

    assert found.why == f".docs/instructions.md {LINKS_NOT_FOLLOWED}"


def test_an_exercise_folder_that_is_a_link_to_elsewhere_is_refused_not_followed(
    tmp_path: Path,
) -> None:
    elsewhere = _exercise(tmp_path / "elsewhere" / "away", "away")
    (elsewhere / ".docs/instructions.md").write_text(f"{MARKER}\n", encoding="utf-8")
    source = tmp_path / "practice"
    _exercise(source / "plain", "plain")
    (source / "away").symlink_to(elsewhere)

    found = import_exercism(source, tmp_path / "suite")

    assert [(e.name, e.why) for e in found] == [("away", f"away {LINKED_TASK}"), ("plain", "")]
    assert MARKER not in _written(tmp_path / "suite")


def test_a_foreign_harbor_task_whose_instruction_links_to_the_netrc_is_refused(
    tmp_path: Path,
) -> None:
    netrc = _netrc(tmp_path)
    source = tmp_path / "harbor"
    write_task(source / "plain")
    _link(write_task(source / "leaky") / "instruction.md", netrc)

    found = import_harbor(source, tmp_path / "suite")

    assert [(t.name, t.why) for t in found] == [
        ("leaky", f"instruction.md {LINKS_NOT_FOLLOWED}"),
        ("plain", ""),
    ]
    assert MARKER not in _written(tmp_path / "suite")


def test_a_harbor_task_whose_task_toml_is_a_link_is_refused_by_name_not_skipped(
    tmp_path: Path,
) -> None:
    source = tmp_path / "harbor"
    write_task(source / "plain")
    _link(write_task(source / "leaky") / "task.toml", _netrc(tmp_path))

    found = import_harbor(source, tmp_path / "suite")

    assert [(t.name, t.why) for t in found] == [
        ("leaky", f"task.toml {LINKS_NOT_FOLLOWED}"),
        ("plain", ""),
    ]


def test_an_exported_harbor_task_whose_hidden_test_links_to_the_netrc_is_refused(
    tmp_path: Path,
) -> None:
    netrc = _netrc(tmp_path)
    suite = tmp_path / "suite"
    for name in ("csv-quoting", "interval-merge"):
        shutil.copytree(GENERAL / name, suite / name)
    export_suite(suite, tmp_path / "harbor")
    _link(tmp_path / "harbor/csv-quoting/tests/hidden/conftest.py", netrc)

    found = import_harbor(tmp_path / "harbor", tmp_path / "back")

    assert [(t.name, t.why) for t in found] == [
        ("csv-quoting", f"tests/hidden/conftest.py {LINKS_NOT_FOLLOWED}"),
        ("interval-merge", ""),
    ]
    assert MARKER not in _written(tmp_path / "back")


def test_a_fifo_among_a_tasks_tests_is_refused_without_waiting_on_it(tmp_path: Path) -> None:
    source = tmp_path / "harbor"
    write_task(source / "plain")
    os.mkfifo(write_task(source / "piped") / "tests/cases.txt")  # nobody ever writes to it

    found = import_harbor(source, tmp_path / "suite")

    assert [(t.name, t.why) for t in found] == [
        ("piped", "tests/cases.txt is a FIFO, socket or device: only files are read"),
        ("plain", ""),
    ]


def test_a_file_over_the_cap_and_a_task_over_the_total_cap_are_refused(tmp_path: Path) -> None:
    source = tmp_path / "harbor"
    write_task(source / "plain")
    with open(write_task(source / "huge") / "tests/data.bin", "wb") as big:
        big.truncate(FILE_CAP + 1)  # sparse: quick to make, as long to read as any file
    many = write_task(source / "many")
    for n in range(TASK_CAP // FILE_CAP + 1):
        with open(many / f"tests/part{n}.bin", "wb") as part:
            part.truncate(FILE_CAP)

    found = import_harbor(source, tmp_path / "suite")

    mib = 2**20
    assert [(t.name, t.why.split(" (at ")[0]) for t in found] == [
        ("huge", f"tests/data.bin is larger than {FILE_CAP // mib} MiB"),
        ("many", f"its files pass {TASK_CAP // mib} MiB together"),
        ("plain", ""),
    ]


def _pairs(root: Path) -> tuple[Path, Path, Path]:
    folders = buggy, correct, tests = root / "buggy", root / "correct", root / "json"
    for folder in folders:
        folder.mkdir(parents=True)
    for name in ("inc", "dec"):
        (buggy / f"{name}.py").write_text(f"def {name}(x):\n    return x\n", encoding="utf-8")
        step = "+ 1" if name == "inc" else "- 1"
        (correct / f"{name}.py").write_text(f"def {name}(x):\n    return x {step}\n", "utf-8")
        (tests / f"{name}.json").write_text(f"[[1], {1 + 1 if name == 'inc' else 0}]\n", "utf-8")
    return folders


def test_a_buggy_program_that_is_a_link_is_refused_by_name_not_skipped(tmp_path: Path) -> None:
    netrc = _netrc(tmp_path)
    buggy, correct, tests = _pairs(tmp_path)
    _link(buggy / "dec.py", netrc)

    found = import_pairs(buggy, correct, tests, tmp_path / "suite")

    assert [(p.name, p.why) for p in found] == [
        ("dec", f"buggy/dec.py {LINKS_NOT_FOLLOWED}"),
        ("inc", ""),
    ]
    assert MARKER not in _written(tmp_path / "suite")


def test_test_data_over_the_cap_is_refused_for_its_size(tmp_path: Path) -> None:
    buggy, correct, tests = _pairs(tmp_path)
    with open(tests / "dec.json", "wb") as big:
        big.truncate(FILE_CAP + 1)

    found = import_pairs(buggy, correct, tests, tmp_path / "suite")

    assert [(p.name, p.why) for p in found] == [
        ("dec", f"json/dec.json is larger than {FILE_CAP // 2**20} MiB"),
        ("inc", ""),
    ]


@pytest.mark.parametrize("kind", ["exercism", "harbor"])
def test_the_command_names_the_link_and_prints_nothing_of_what_it_leads_to(
    tmp_path: Path, kind: str
) -> None:
    netrc = _netrc(tmp_path)
    source = tmp_path / "source"
    if kind == "exercism":
        _exercise(source / "plain", "plain")
        _link(_exercise(source / "leaky", "leaky") / ".docs/instructions.md", netrc)
    else:
        write_task(source / "plain")
        _link(write_task(source / "leaky") / "instruction.md", netrc)
    out = tmp_path / "out"

    result = run_ssw_cli(["bench", "import", kind, str(source), "--out", str(out)], timeout=60)

    assert result.returncode == 1
    assert result.stderr.startswith("refused leaky: ") and "instruction" in result.stderr
    assert "symbolic link" in result.stderr and result.stderr.count("\n") == 1
    assert MARKER not in result.stdout + result.stderr + _written(out)
    assert result.stdout.endswith("1 of 2 tasks written; check them with ssw bench validate\n")
