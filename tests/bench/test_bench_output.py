"""What `ssw bench run` prints into a log (stderr not a terminal): whole lines, a single suite
called by its name."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import write_task
from .test_cli_bench import ssw

LONG = "a-task-with-a-name-long-enough-to-pass-eighty-columns"


@pytest.mark.slow
def test_bench_run_into_a_log_keeps_each_line_whole_and_names_its_one_suite(tmp_path: Path):
    write_task(tmp_path, LONG)
    result = ssw("bench", "run", "--suite", "suite", "--contestant", "oracle",
                 "--contestant", "null", "--out", "runs/b", cwd=tmp_path)  # fmt: skip

    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    [null_line] = [line for line in lines if " null#0 " in line]
    assert null_line.startswith(f"FAILED  suite/{LONG} null#0 ") and len(null_line) > 80
    assert ": no_change: the edit step changed no file" in null_line, lines
    assert any(line.startswith(f"passed  suite/{LONG} oracle#0 $") for line in lines), lines
    table = result.stdout.splitlines()
    assert any(line.split()[:3] == ["oracle", "suite", "1"] for line in table), result.stdout
    assert "oracle vs null (suite, 1 tasks)" in result.stdout
