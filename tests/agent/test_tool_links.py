"""The file tools run on the host: they must never read or write through a symbolic link that
agent code in the sandbox put into the worktree, not even one swapped in while a call runs.

Every test runs twice, once resolving paths with openat2 and once with the component walk
that stands in for it on kernels without openat2 (safe_fs.PREFER_OPENAT2 selects the way).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import stat
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from stepswitch.agent.tools.execute import TOOLS, ToolResult, Workspace, execute_call
from stepswitch.util import safe_fs
from stepswitch.util.safe_fs import Beneath, UnsafePath
from stepswitch.wire.types import ToolCall

ALL = frozenset(TOOLS)
SECRET = "top secret from outside the worktree"
HOST_ONLY = "host only"  # in the outside copy of target.py, never in the worktree
MOD = "def add(a, b):\n    return a + b\n"

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@pytest.fixture(params=["openat2", "walk"])
def resolver(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    way: str = request.param
    if way == "openat2" and not safe_fs.kernel_has_openat2():
        pytest.skip("this kernel has no openat2 (Linux < 5.6, or a seccomp filter refuses it)")
    monkeypatch.setattr(safe_fs, "PREFER_OPENAT2", way == "openat2")
    return way


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A host folder next to the worktree, which no tool call may read or change."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET + "\n")
    (folder / "target.py").write_text(f"a\n# {HOST_ONLY}\n")
    return folder


@pytest.fixture
def ws(tmp_path: Path, outside: Path, resolver: str) -> Workspace:
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "mod.py").write_text(MOD)
    (root / "lib").symlink_to(outside)  # a folder link leading out
    (root / "leak.txt").symlink_to(outside / "secret.txt")  # a file link leading out
    (root / "target_link.py").symlink_to(outside / "target.py")
    (root / "alias").symlink_to(root / "src")  # links that stay inside
    (root / "alias.py").symlink_to(root / "src" / "pkg" / "mod.py")
    return Workspace(root)


def call(ws: Workspace, name: str, **args: Any) -> ToolResult:
    return execute_call(ws, ToolCall("c1", name, json.dumps(args)), ALL)


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under folder with its content (a folder: "folder"), to compare before/after."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        found[rel] = "folder" if path.is_dir() else path.read_bytes()
    return found


def exchange(a: Path, b: Path) -> None:
    """Swap two names in one step (renameat2 RENAME_EXCHANGE), as agent code may at any time."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE):
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(a))


def test_the_resolver_fixture_really_selects_each_way(ws, resolver):
    with Beneath(ws.root) as tree:
        assert tree.uses_openat2 is (resolver == "openat2")


# A link on the way to a host folder


def test_read_through_a_folder_link_to_outside_is_refused_naming_the_link(ws):
    result = call(ws, "read", path="lib/secret.txt")
    assert result.refused
    assert "leads through a symbolic link at 'lib'" in result.output
    assert "paths must be inside the repository" in result.output
    assert SECRET not in result.output


def test_read_of_a_file_link_to_outside_is_refused(ws):
    result = call(ws, "read", path="leak.txt")
    assert result.refused
    assert "'leak.txt' is a symbolic link" in result.output
    assert SECRET not in result.output


def test_edit_through_a_folder_link_changes_nothing_outside(ws, outside):
    before = snapshot(outside)
    result = call(ws, "edit", path="lib/target.py", old="a", new="changed")
    assert result.refused
    assert "symbolic link at 'lib'" in result.output
    assert snapshot(outside) == before


def test_edit_of_a_file_link_changes_neither_the_link_nor_its_target(ws, outside):
    before = snapshot(outside)
    result = call(ws, "edit", path="/repo/target_link.py", old="a", new="changed")
    assert result.refused
    assert "is a symbolic link" in result.output
    assert snapshot(outside) == before
    assert (ws.root / "target_link.py").is_symlink()


def test_write_file_through_a_folder_link_creates_nothing_outside(ws, outside):
    before = snapshot(outside)
    for path in ("lib/new.py", "lib/new/deep/x.py", "lib/target.py"):
        result = call(ws, "write_file", path=path, content="x = 1\n")
        assert result.refused, path
        assert "symbolic link at 'lib'" in result.output
    assert snapshot(outside) == before


def test_write_file_over_a_file_link_leaves_its_target_alone(ws, outside):
    before = snapshot(outside)
    result = call(ws, "write_file", path="target_link.py", content="x = 1\n")
    assert result.refused
    assert snapshot(outside) == before


def test_list_dir_shows_links_as_entries_and_refuses_to_enter_them(ws):
    assert call(ws, "list_dir").output.splitlines() == [
        "alias.py@",
        "alias@",
        "leak.txt@",
        "lib@",
        "src/",
        "target_link.py@",
    ]
    result = call(ws, "list_dir", path="lib")
    assert result.refused
    assert "'lib' is a symbolic link" in result.output
    assert "secret.txt" not in result.output


def test_search_reads_nothing_through_links(ws):
    assert call(ws, "search", pattern="secret").output == "No matches for 'secret' under '.'."
    for path in ("lib", "leak.txt", "lib/secret.txt"):
        result = call(ws, "search", pattern="secret", path=path)
        assert result.refused, path
        assert SECRET not in result.output


def test_find_files_lists_nothing_through_links(ws):
    assert call(ws, "find_files", pattern="**/*").output.splitlines() == ["src/pkg/mod.py"]
    result = call(ws, "find_files", pattern="*", path="lib")
    assert result.refused
    assert "secret.txt" not in result.output


# A link that stays inside the worktree


def test_a_link_that_stays_inside_is_not_followed_either(ws):
    for path in ("alias/pkg/mod.py", "alias.py"):
        result = call(ws, "read", path=path)
        assert result.refused, path
        assert "symbolic link" in result.output
    assert call(ws, "edit", path="alias.py", old="a + b", new="b + a").refused
    assert call(ws, "write_file", path="alias/pkg/mod.py", content="").refused
    assert (ws.root / "src" / "pkg" / "mod.py").read_text() == MOD
    assert call(ws, "find_files", pattern="mod.py").output == "src/pkg/mod.py"
    assert call(ws, "search", pattern="def add").output == "src/pkg/mod.py:1: def add(a, b):"


# safe_fs itself


def test_openat2_itself_refuses_a_link_anywhere_on_the_way(ws):
    if not safe_fs.kernel_has_openat2():
        pytest.skip("this kernel has no openat2")
    with Beneath(ws.root, use_openat2=True) as tree:
        os.close(safe_fs.openat2(tree.fd, "src/pkg/mod.py", os.O_RDONLY))
        for rel in ("lib/secret.txt", "leak.txt", "alias/pkg/mod.py"):
            with pytest.raises(OSError) as info:
                safe_fs.openat2(tree.fd, rel, os.O_RDONLY)
            assert info.value.errno == errno.ELOOP, rel


@pytest.mark.parametrize("rel", ["../outside/secret.txt", "src/../../outside", "/etc/passwd"])
def test_paths_that_climb_out_or_are_absolute_are_refused_before_any_open(ws, rel):
    with Beneath(ws.root) as tree, pytest.raises(UnsafePath):
        tree.open(rel)


def test_write_keeps_the_permission_bits_and_leaves_no_temporary_file(ws):
    script = ws.root / "run.sh"
    script.write_text("echo 1\n")
    script.chmod(0o750)
    with Beneath(ws.root) as tree:
        assert tree.write("run.sh", b"echo 2\n") is True
        assert tree.write("fresh.txt", b"new\n") is False
    assert script.read_text() == "echo 2\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert not [p.name for p in ws.root.iterdir() if p.name.startswith(".ssw-write-")]


def test_edit_of_a_hard_link_to_an_outside_file_leaves_that_file_alone(ws, outside):
    # The rename replaces the worktree's name; writing in place would change the shared inode.
    os.link(outside / "target.py", ws.root / "hard.py")
    assert call(ws, "edit", path="hard.py", old=f"# {HOST_ONLY}", new="# inside").ok
    assert (outside / "target.py").read_text() == f"a\n# {HOST_ONLY}\n"
    assert (ws.root / "hard.py").read_text() == "a\n# inside\n"


def test_reading_a_fifo_fails_at_once_instead_of_waiting_for_a_writer(ws):
    fifo = ws.root / "pipe"
    os.mkfifo(fifo)
    results: list[ToolResult] = []
    reader = threading.Thread(target=lambda: results.append(call(ws, "read", path="pipe")))
    reader.start()
    reader.join(timeout=60)  # a guard only: a read that waits for a writer never returns
    if reader.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # be that writer, to end the test
        reader.join()
    assert not results[0].ok
    assert "not a regular file" in results[0].output


# Races: a folder swapped for a link to a host folder while calls run


def the_old_edit(root: Path, rel: str, old: str, new: str, between: Callable[[], None]) -> None:
    """What edit did before: resolve the path, check that it is inside root, then open it again
    by name to read and to write; `between` runs where agent code can act."""
    real = (root / rel).resolve()
    if not real.is_relative_to(root) or not real.exists() or real.is_dir():
        return
    text = real.read_text()
    between()
    real.write_text(text.replace(old, new, 1))


@pytest.fixture
def swappable(ws: Workspace, outside: Path) -> tuple[Path, Path]:
    """sub, a real folder of the worktree, and .swap, a link to the outside folder: exchanging
    the two names leaves sub one or the other at every instant."""
    (ws.root / "sub").mkdir()
    (ws.root / "sub" / "target.py").write_text("a\n")
    (ws.root / ".swap").symlink_to(outside)
    return ws.root / "sub", ws.root / ".swap"


def test_the_old_check_then_open_writes_outside_when_the_folder_is_swapped_after_the_check(
    ws, outside, swappable
):
    """The control, made deterministic: the swap lands between the old code's check and its
    write, which is the window a racing process has to hit."""
    the_old_edit(ws.root, "sub/target.py", "a", "a\nb", between=lambda: exchange(*swappable))
    assert (outside / "target.py").read_text() == "a\nb\n"  # the worktree's text, edited


def test_safe_fs_refuses_the_write_when_the_folder_is_swapped_after_the_check(
    ws, outside, swappable
):
    before = snapshot(outside)
    with Beneath(ws.root) as tree:
        assert tree.stat("sub/target.py") is not None
        with tree.open_file("sub/target.py") as handle:
            text = handle.read()
        exchange(*swappable)
        with pytest.raises(UnsafePath, match="symbolic link at 'sub'"):
            tree.write("sub/target.py", text + b"b\n")
    assert snapshot(outside) == before


SWAPPER = r"""
import ctypes, os, sys
renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
a, b, stop = (os.fsencode(arg) for arg in sys.argv[1:])
swaps = 0
while swaps == 0 or not os.path.exists(stop):
    if renameat2(-100, a, -100, b, 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
        sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
    swaps += 1
    if swaps == 1:
        print("swapping", flush=True)
print(swaps, flush=True)
"""


class Swapper:
    """Another process exchanging two names as fast as it can, from the first call to the last,
    as agent code in the sandbox can."""

    def __init__(self, a: Path, b: Path) -> None:
        self.argv = [sys.executable, "-c", SWAPPER, str(a), str(b), str(a.parent.parent / "stop")]
        self.stop = a.parent.parent / "stop"
        self.swaps = 0

    def __enter__(self) -> Swapper:
        self.process = subprocess.Popen(self.argv, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        assert self.process.stdout.readline() == "swapping\n", "the swapper did not start"
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop.touch()
        out, _ = self.process.communicate(timeout=60)  # a guard against a hang, not a measure
        self.stop.unlink()
        assert self.process.returncode == 0, out
        self.swaps = int(out.split()[-1])


RACE_CALLS = 300  # at least; on until both outcomes were seen a few times, at most RACE_CAP
RACE_CAP = 3000
RACES = {
    "edit": {"path": "sub/target.py", "old": "a", "new": "a\nb"},
    "write_file": {"path": "sub/made/new.txt", "content": "inside\n"},
    "read": {"path": "sub/target.py"},
    "search": {"pattern": r"host\sonly", "path": "sub"},  # a refusal quotes it otherwise
}


def outcome(result: ToolResult) -> str:
    if result.refused and "symbolic link" in result.output:
        return "refused"
    return "done" if result.ok else f"other: {result.output}"


@pytest.mark.parametrize("tool", list(RACES))
def test_tools_racing_a_folder_swapped_for_a_link_never_touch_outside(ws, outside, swappable, tool):
    before = snapshot(outside)
    outcomes: Counter[str] = Counter()
    leaked = []
    with Swapper(*swappable) as swapper:
        for calls in range(RACE_CAP):
            result = call(ws, tool, **RACES[tool])
            outcomes[outcome(result)] += 1
            if HOST_ONLY in result.output:
                leaked.append(result.output)
            if calls >= RACE_CALLS and min(outcomes["done"], outcomes["refused"]) >= 5:
                break
    assert snapshot(outside) == before
    assert not leaked
    assert set(outcomes) <= {"done", "refused"}, outcomes
    assert outcomes["done"] and outcomes["refused"], "the race never interleaved"
    assert swapper.swaps > 0
    real = next(p for p in swappable if not p.is_symlink())
    if tool == "edit":  # every edit reported done landed in the real folder, and only those
        assert (real / "target.py").read_text().count("b") == outcomes["done"]
    if tool == "write_file":
        assert (real / "made" / "new.txt").read_text() == "inside\n"


def test_the_old_check_then_open_loses_the_same_race(ws, outside, swappable):
    """The control under the real race: the old code writes outside within a few hundred calls
    on two processors. With one the swapper rarely runs inside its window: the deterministic
    control above shows the same thing there."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one processor: the racing swapper seldom preempts the window")
    before = (outside / "target.py").read_text()

    with Swapper(*swappable):
        for _ in range(20 * RACE_CAP):
            # The old code also raised from resolve() when a name changed kind under realpath.
            with contextlib.suppress(OSError):
                the_old_edit(ws.root, "sub/target.py", "a", "a\nb", between=lambda: None)
            if (outside / "target.py").read_text() != before:
                break
    assert (outside / "target.py").read_text() != before
