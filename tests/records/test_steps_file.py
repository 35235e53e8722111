"""A run's steps file stays open between events (ADR 0092): every event is on disk when append
returns, one removed or moved meanwhile is made again where the records are read, and a forked
child never closes the descriptor its parent holds."""

from __future__ import annotations

import gc
import os
from pathlib import Path

from stepswitch.records.folder import RunFolder
from stepswitch.records.steps import Finish


def _finish(n: int) -> Finish:
    return Finish(run_id="r1", outcome="done", reason=f"event {n}", exit_code=0)


def _reasons(path: Path) -> list[str]:
    return [line.split('"reason":"')[1].split('"')[0] for line in path.read_text().splitlines()]


def test_each_event_is_on_disk_when_append_returns(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run")
    for n in range(3):
        folder.append(_finish(n))
        assert _reasons(folder.steps_path)[-1] == f"event {n}"  # read by another handle
    assert _reasons(folder.steps_path) == ["event 0", "event 1", "event 2"]


def test_a_steps_file_removed_during_the_run_is_made_again(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run")
    folder.append(_finish(0))
    folder.steps_path.unlink()  # someone cleans the folder while the run goes on
    folder.append(_finish(1))
    assert _reasons(folder.steps_path) == ["event 1"]

    (tmp_path / "run").rename(tmp_path / "gone")  # the whole folder, too
    folder.append(_finish(2))
    assert _reasons(folder.steps_path) == ["event 2"]


def test_a_forked_child_never_closes_a_number_its_parent_held(tmp_path: Path) -> None:
    """The parent's descriptor number, free in the child and taken there by another file, stays
    that file's when the child drops the folder (the finalizer closes only its own process's)."""
    folder = RunFolder(tmp_path / "run")
    folder.append(_finish(0))
    held = folder._steps
    assert held is not None
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            folder.append(_finish(1))  # the child writes through a descriptor of its own
            os.close(held[1])  # the parent's number, free here
            other = os.open(tmp_path / "child.txt", os.O_WRONLY | os.O_CREAT, 0o600)
            assert other == held[1]
            del folder
            gc.collect()
            os.write(other, b"still open\n")  # EBADF had the parent's finalizer closed it
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert (tmp_path / "child.txt").read_text() == "still open\n"

    folder.append(_finish(2))  # the parent's descriptor still works
    assert _reasons(folder.steps_path) == ["event 0", "event 1", "event 2"]
