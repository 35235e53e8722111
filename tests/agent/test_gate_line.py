"""The line `ssw run` prints for the gates: a failing gate named once, with what failed."""

from __future__ import annotations

from pathlib import Path

from tests.harness.task import done, explore, make_policy, tool, write_policy, write_script

from .test_run_cli import ssw


def test_a_failing_gate_is_named_once_with_its_failing_test(tmp_path: Path, bug_repo: Path):
    # Scripted: the edit leaves the bug in, the gates fail, and the script ends there.
    replies = [
        *explore(),
        tool("edit", path="calc/ops.py", old="+ 1)", new="+ 2)"),
        done("tried + 2"),
    ]
    policy = write_policy(tmp_path, make_policy(escalation={"after_gate_failures": 1}))
    script = write_script(tmp_path, replies)
    result = ssw("run", bug_repo, "--policy", policy, "--script", script, "--task", "fix mean")

    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("    gates     ")]
    assert lines, result.stdout
    assert lines[0].split()[:3] == ["gates", "failed:", "tests:covered:"], lines[0]
    assert lines[0].count("tests:covered") == 1, lines[0]
    assert "test_mean_of_three_numbers" in lines[0], lines[0]
