"""A cluster worker's run folders (bench/worker_folders.py): the folder of a run whose worker
was killed is removed before the next run; one in use, one without a lock file, and anything
that is not this user's own folder are left alone."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from pathlib import Path

from stepswitch.bench.worker_folders import LOCK_NAME, PREFIX, remove_abandoned

HOLDER = """
import sys
from stepswitch.bench.worker_folders import run_folder
with run_folder() as folder:
    (folder / "change.patch").write_text("a run's work\\n")
    print(folder, flush=True)
    sys.stdin.read()  # until the test ends it
"""


def _folder(parent: Path, name: str, lock: bool = True) -> Path:
    folder = parent / f"{PREFIX}{name}"
    (folder / "bench").mkdir(parents=True)
    (folder / "bench" / "run.json").write_text("{}\n")
    if lock:
        (folder / LOCK_NAME).write_text("")
    return folder


def test_a_killed_workers_folder_goes_before_the_next_run_and_a_live_ones_stays(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    worker = subprocess.Popen(
        [sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
        text=True,
    )  # fmt: skip
    try:
        assert worker.stdout is not None
        folder = Path(worker.stdout.readline().strip())
        assert folder.parent == tmp_path and (folder / "change.patch").is_file()
        assert remove_abandoned(tmp_path) == [] and folder.is_dir()  # its worker holds it
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    assert folder.is_dir()  # a kill -9 leaves it behind...
    assert remove_abandoned(tmp_path) == [folder]  # ...until the next run on the machine
    assert not folder.exists()


def test_only_this_users_unheld_run_folders_are_removed(tmp_path: Path) -> None:
    abandoned = _folder(tmp_path, "left")
    held = _folder(tmp_path, "held")
    unlocked = _folder(tmp_path, "making", lock=False)  # no lock file yet: being made
    target = _folder(tmp_path.parent / f"{tmp_path.name}-elsewhere", "x")
    (tmp_path / f"{PREFIX}link").symlink_to(target)
    (tmp_path / f"{PREFIX}file").write_text("not a folder\n")
    fd = os.open(held / LOCK_NAME, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert remove_abandoned(tmp_path) == [abandoned]
    finally:
        os.close(fd)
    assert not abandoned.exists()
    assert held.is_dir() and unlocked.is_dir() and target.is_dir()
    assert (tmp_path / f"{PREFIX}file").is_file()
