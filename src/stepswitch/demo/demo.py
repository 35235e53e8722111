"""Copy the sample repository, commit it, and run the demo task on it with scripted replies."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from stepswitch.agent.run import RunOptions, run_task
from stepswitch.errors import UsageError
from stepswitch.records import RunRecord

HERE = Path(__file__).parent
TASK = (
    "word_count in textstats/stats.py miscounts text with several spaces in a row, tabs or line "
    "breaks, and says empty text has one word. Make it count words separated by any whitespace."
)


def prepare_sample(target: Path) -> Path:
    if target.exists() and any(target.iterdir()):
        raise UsageError(f"{target} is not empty; pick a new folder for the demo")
    shutil.copytree(HERE / "sample", target, dirs_exist_ok=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "demo",
        "GIT_AUTHOR_EMAIL": "demo@localhost",
        "GIT_COMMITTER_NAME": "demo",
        "GIT_COMMITTER_EMAIL": "demo@localhost",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "sample"]):
        subprocess.run(["git", *args], cwd=target, env=env, check=True, capture_output=True)
    return target


def run_demo(target: Path | None, print_line: Callable[[str], None]) -> RunRecord:
    repo = prepare_sample(target or Path(tempfile.mkdtemp(prefix="ssw-demo-")))
    # The sample's tests run with this Python (it has pytest), whatever PATH says.
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    print_line(f"demo repository: {repo}")
    print_line(f"task: {TASK}")
    record = run_task(
        RunOptions(
            repo=repo, task=TASK, policy_path=HERE / "policy.toml", script=HERE / "script.yaml"
        ),
        print_line,
    )
    print_line(f"see the change: git -C {repo} show {record.branch}")
    return record
