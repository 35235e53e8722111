"""Issue 23, route 9: absolute paths in evidence. `ssw prove --check` refuses an input (anything
read through claims/inputs.py `Inputs`) that names a machine's own paths: its home, a scratch or
checkout folder, an interpreter or venv; it names the claim, the file and the line. URLs, API
routes, `/dev/null` and the system's own paths pass
(docs/decisions/0026-evidence-raw-and-relative.md).

Each tamper edits a copy of committed evidence in a temp repository, re-proves it and runs the real
`python -m stepswitch prove --check`; the control is the same copy with its paths relative."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.claims.conftest import inrun_claim
from tests.claims.test_raw_samples import (
    PERF,
    PERF_CLAIMS,
    copy,
    edit_json,
    make,
    reprove_and_check,
    ssw_prove,
    with_samples,
)

BOLTONS = "bench/gates/summary-boltons.json"
INRUN_CLAIMS = inrun_claim("C-003", ("boltons",))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    edit_json(copy(root, PERF, "tests/fixtures/claims/perf-results.json"), with_samples)
    copy(root, BOLTONS)
    copy(root, "bench/gates/results-boltons.csv")
    make(root, PERF_CLAIMS + INRUN_CLAIMS, ["C-001", "C-002", "C-003"])
    code, out = ssw_prove(root)
    assert code == 0, out
    return root


def machine_paths(text: str, root: Path | None = None) -> list[tuple[int, str]]:
    # imported here, so the tampers also run (and fail) against code without the rule
    from stepswitch.claims.inputs import machine_paths as found

    return found(text, root)


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


# --- the rule -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "see https://example.org/home/user/tmp/x and git@github.com:owner/work.git",
        "python -m pytest > /dev/null 2>&1; cat /proc/cpuinfo /etc/hosts",
        "#!/usr/bin/env python3 and #!/usr/bin/python3",
        "POST /v1/chat/completions and /v1/messages",
        "a ratio of 1/3, 4.8 ms/step, ssw / mini, and/or",
        "bench/perf/.venv-ssw/bin/python -m pytest and .venv/bin/python",
        "<worktree>/boltons/__init__.py and <tmp>/grading/run-1/tmp/pytest-of-root",
        "an /opt-in flag",
    ],
)
def test_what_the_rule_lets_through(text: str) -> None:
    assert machine_paths(text) == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('"command": "cd /home/ci/src && make"', "/home/ci/src"),
        ("gates: Python /srv/ci/x/.venv/bin/python (the repository's .venv)", "/srv/ci/x/.venv/"),
        ("tmp_path = PosixPath('/tmp/pytest-of-root/pytest-0')", "/tmp/pytest-of-root/pytest-0"),
        ('"output": "E   at\\n/root/.cache/x.py"', "/root/.cache/x.py"),
        ("Python /usr/local/bin/python3.11", "/usr/local/bin/python3.11"),
        ("interpreter /ci/cache/envs/py311/bin/python", "/ci/cache/envs/py311/bin/python"),
    ],
)
def test_what_the_rule_refuses(text: str, found: str) -> None:
    ((line, path),) = machine_paths(text)
    assert line == 1 and path.startswith(found)


def test_the_repositorys_own_location_is_refused_wherever_it_is(tmp_path: Path) -> None:
    checkout = tmp_path / "any-name"
    text = f"first line\nran in {checkout.as_posix()}/src\n"
    assert machine_paths(text, checkout)[-1] == (2, f"{checkout.as_posix()}/src")


# --- the control --------------------------------------------------------------------------------


def test_the_copies_with_relative_paths_pass_the_check(repo: Path) -> None:
    for rel in (PERF, BOLTONS, "bench/gates/results-boltons.csv"):
        assert machine_paths((repo / rel).read_text()) == [], rel
    code, out = ssw_prove(repo, "--check")
    assert code == 0, out


# --- the tampers --------------------------------------------------------------------------------


def test_an_interpreter_path_in_the_perf_results_fails_the_check(repo: Path) -> None:
    fake = "/home/ci/checkout/.venv/bin/python"

    def interpreter(data: dict[str, Any]) -> None:
        data["overhead"]["ssw_runs"][0]["gate_commands"][0] = f"{fake} -m pytest -q"

    edit_json(repo / PERF, interpreter)
    line = _line_of(repo / PERF, fake)
    code, out = reprove_and_check(repo)
    assert code == 1, out
    for claim in ("C-001", "C-002"):
        assert (
            f"problem: {claim}: the evidence cannot prove it: bench/perf/results.json:{line}: "
            f"holds an absolute machine path '{fake}'" in out
        ), out


def test_a_cd_into_a_checkout_in_the_command_line_fails_the_check(repo: Path) -> None:
    def command(data: dict[str, Any]) -> None:
        data["command"] = "cd /work/ci-checkout && .venv/bin/python bench/perf/run_all.py"

    edit_json(repo / PERF, command)
    line = _line_of(repo / PERF, '"command"')
    code, out = reprove_and_check(repo)
    assert code == 1, out
    assert (
        f"problem: C-001: the evidence cannot prove it: bench/perf/results.json:{line}: holds an "
        "absolute machine path '/work/ci-checkout'" in out
    ), out


def test_the_worktree_and_interpreter_lines_of_a_gates_summary_fail_the_check(repo: Path) -> None:
    path = repo / BOLTONS
    worktree = "/srv/build/ssw/bench/gates/.work/boltons-26.2.0"

    def lines(data: dict[str, Any]) -> None:
        data["interpreter"] = f"gates: Python {worktree}/.venv/bin/python (the repository's .venv)"
        data["preflight"] = f"gates: the tests import boltons from {worktree}/boltons/__init__.py"

    edit_json(path, lines)
    line = _line_of(path, '"interpreter"')
    code, out = reprove_and_check(repo)
    assert code == 1, out
    assert (
        f"problem: C-003: the evidence cannot prove it: {BOLTONS}:{line}: holds an absolute "
        f"machine path '{worktree}/.venv/bin/python' (and 1 more line)" in out
    ), out
