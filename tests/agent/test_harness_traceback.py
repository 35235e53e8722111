"""A run that ends `harness_error` keeps the traceback of ssw's own error in run.json, as Harbor
keeps a trial's exception, with no machine path in it (run folders go into committed evidence);
`ssw runs show` prints it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from stepswitch.records.crash import crash_traceback
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import sample_repo

from .test_library import EXPLORE, FIX, CountingGates, library_run


def test_a_harness_error_keeps_its_traceback_and_ssw_runs_show_prints_it(tmp_path: Path):
    checkout = sample_repo(tmp_path / "repo", "mean_bug")
    broken = CountingGates(raise_on=1)  # the gate runner itself raises at the first gate run
    record, _, _, _ = library_run(tmp_path, checkout, [*EXPLORE, *FIX], gates=broken)
    assert record.outcome == "harness_error"
    shutil.copytree(tmp_path / "records", checkout / ".ssw" / "runs" / record.run_id)

    shown = run_ssw_cli(["runs", "show", record.run_id, "--repo", str(checkout)], timeout=60)

    assert shown.returncode == 0, shown.stderr
    trace = shown.stdout[shown.stdout.index("\ntraceback:\n") :]
    assert 'File "stepswitch/agent/machine.py"' in trace  # ssw's frames, inside its package
    assert "in _gates_pass" in trace and "in run" in trace
    assert "\n  RuntimeError: the gate runner itself broke\n" in trace
    saved = json.loads((checkout / ".ssw" / "runs" / record.run_id / "run.json").read_text())
    assert saved["traceback"] == record.traceback
    assert 'File "/' not in saved["traceback"]  # no absolute machine path


def test_a_traceback_names_files_outside_any_import_path_by_name_alone(tmp_path: Path):
    script = tmp_path / "elsewhere" / "broken.py"
    script.parent.mkdir()
    script.write_text("def fail():\n    raise ValueError('broken')\n")
    space: dict[str, Any] = {}
    exec(compile(script.read_text(), str(script), "exec"), space)
    try:
        space["fail"]()
    except ValueError as exc:
        text = crash_traceback(exc)

    assert 'File "broken.py", line 2, in fail' in text
    assert str(tmp_path) not in text
