"""`ssw demo`: the sample repository, committed in a new folder, and the demo task run on it
with scripted replies: no key, no network."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from stepswitch.cli.run import RunOptions, run_local
from stepswitch.demo.demo import POLICY, SCRIPT, TASK, prepare_sample
from stepswitch.records.run import RunRecord


def run_demo(target: Path | None, print_line: Callable[[str], None]) -> RunRecord:
    repo = prepare_sample(target or Path(tempfile.mkdtemp(prefix="ssw-demo-")))
    # The sample's tests run with this Python (it has pytest), whatever PATH says.
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    print_line(f"demo repository: {repo}")
    print_line(f"task: {TASK}")
    record = run_local(
        RunOptions(repo=repo, task=TASK, policy_path=POLICY, script=SCRIPT), print_line
    )
    print_line(f"see the change: git -C {repo} show {record.branch}")
    return record
