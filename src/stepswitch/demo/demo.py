"""The demo's sample repository, task, policy and script; `ssw demo` (cli/demo.py) runs it."""

from __future__ import annotations

import shutil
from pathlib import Path

from stepswitch.errors import UsageError
from stepswitch.util.git import git_out

HERE = Path(__file__).parent
POLICY = HERE / "policy.toml"
SCRIPT = HERE / "script.yaml"
TOUR = HERE / "tour.yaml"  # canned replies that fit any repository (fakes/tour.py)
TOUR_TASK = "Scripted tour: show each step of ssw on this repository, and change nothing."
TASK = (
    "word_count in textstats/stats.py miscounts text with several spaces in a row, tabs or line "
    "breaks, and says empty text has one word. Make it count words separated by any whitespace."
)


def prepare_sample(target: Path) -> Path:
    if target.exists() and any(target.iterdir()):
        raise UsageError(f"{target} is not empty; pick a new folder for the demo")
    try:
        shutil.copytree(HERE / "sample", target, dirs_exist_ok=True)
    except OSError as exc:  # a read-only or full disk, a file in the way
        why = exc.strerror or str(exc)
        raise UsageError(f"cannot make the demo repository in {target}: {why}") from None
    env = {
        "GIT_AUTHOR_NAME": "demo",
        "GIT_AUTHOR_EMAIL": "demo@localhost",
        "GIT_COMMITTER_NAME": "demo",
        "GIT_COMMITTER_EMAIL": "demo@localhost",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "sample"]):
        git_out(target, *args, env=env)
    return target
