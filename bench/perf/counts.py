"""Processes and disk syncs of one ssw run, counted rather than timed (issue 48).

Two counters, both over the same window as the run's clock (`ssw_run.py`: from opening the
ledger to the end of the clean-up):
- `ProcessCounter`, always: a `sys.addaudithook` hook counts the processes ssw's own Python
  starts (`subprocess.Popen`, `os.posix_spawn`, `os.exec*`, `os.system`), by program: git, the
  sandbox (`bwrap`, which then starts the command in it), any other. Standard library only, so it
  works wherever the benchmark runs; it cannot see what those processes start in turn.
- `strace_counts`, when `strace` is on PATH and may trace (run_all.py runs one extra, untimed
  repetition under it): every fsync/fdatasync and every execve of the process and its children,
  between two markers the run makes (`mark`: a statfs of a path that does not exist). Without
  strace the table says so, and the syncs are not counted.

Run on its own it counts one repetition both ways and prints them (no timing, no mini-swe-agent):

    .venv/bin/python bench/perf/counts.py
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MARK_BEGIN = "/ssw-bench-mark-begin"
MARK_END = "/ssw-bench-mark-end"
_STARTS = ("subprocess.Popen", "os.posix_spawn", "os.exec", "os.system")


def mark(name: str) -> None:
    """A syscall strace sees with `name` in it (the path does not exist: nothing is read)."""
    with contextlib.suppress(OSError):
        os.statvfs(name)


def _program(args: Any) -> str:
    argv = [args] if isinstance(args, str | bytes | os.PathLike) else list(args or [""])
    first = os.fsdecode(argv[0]) if argv else ""
    return Path(first.split()[0] if first else "").name


@dataclass
class ProcessCounter:
    """Processes ssw's Python started while `counting`, by program name."""

    counting: bool = False
    by_program: dict[str, int] = field(default_factory=dict)

    def install(self) -> None:
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.counting or event not in _STARTS:
            return
        if event == "subprocess.Popen":
            name = _program(args[1] if args[1] else args[0])
        elif event == "os.system":
            name = "sh"
        else:
            name = _program(args[1] if len(args) > 1 else args[0])
        self.by_program[name] = self.by_program.get(name, 0) + 1

    def summary(self) -> dict[str, Any]:
        git = self.by_program.get("git", 0)
        sandbox = self.by_program.get("bwrap", 0)
        return {
            "total": sum(self.by_program.values()),
            # the measure: what ssw starts for itself, the confined commands aside
            "besides_commands": sum(self.by_program.values()) - sandbox,
            "git": git,
            "sandboxed_commands": sandbox,
            "other": sum(self.by_program.values()) - git - sandbox,
            "by_program": dict(sorted(self.by_program.items())),
        }


_EXECVE = re.compile(r'^\d+\s+execve\("([^"]+)", \[(.*?)\][^=]*= 0')
_SYNC = re.compile(r"^\d+\s+(fsync|fdatasync)\(")


def parse_strace(text: str) -> dict[str, Any]:
    """Syncs and started programs between the two markers of one strace -f output."""
    inside = False
    syncs = {"fsync": 0, "fdatasync": 0}
    programs: dict[str, int] = {}
    for line in text.splitlines():
        if MARK_BEGIN in line:
            inside = True
        elif MARK_END in line:
            inside = False
        elif inside and (found := _SYNC.match(line)):
            syncs[found.group(1)] += 1
        elif inside and (found := _EXECVE.match(line)):
            name = Path(found.group(1)).name
            programs[name] = programs.get(name, 0) + 1
    return {
        "syncs": sum(syncs.values()),
        **syncs,
        "execve": sum(programs.values()),
        "execve_by_program": dict(sorted(programs.items())),
    }


def strace_counts(argv: list[str], cwd: Path) -> dict[str, Any]:
    """`argv` (ssw_run.py) under `strace -f`, counted between its markers; why not, when strace
    is missing or may not trace here (a container without ptrace)."""
    strace = shutil.which("strace")
    if strace is None:
        return {"available": False, "why": "strace is not installed"}
    with tempfile.TemporaryDirectory(prefix="ssw-strace-") as folder:
        out = Path(folder) / "trace"
        done = subprocess.run(
            [
                strace,
                "-f",
                "-qq",
                "-e",
                "trace=execve,fsync,fdatasync,statfs",
                "-o",
                str(out),
                *argv,
            ],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
        )
        text = out.read_text(encoding="utf-8", errors="replace") if out.exists() else ""
    if done.returncode != 0 or MARK_END not in text:
        return {"available": False, "why": f"strace failed: {done.stderr.strip()[-300:]}"}
    return {"available": True, **parse_strace(text)}


def main() -> None:
    """One ssw repetition counted by its audit hook, then one under strace when it can be."""
    here = Path(__file__).resolve().parent
    python = here / ".venv-ssw" / "bin" / "python"  # run_all.py makes it
    argv = [str(python if python.exists() else Path(sys.executable)), str(here / "ssw_run.py")]
    done = subprocess.run(argv, cwd=here.parents[1], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"ssw_run.py failed ({done.returncode}):\n{done.stderr[-3000:]}")
    counted = json.loads(done.stdout.strip().splitlines()[-1])["processes"]
    traced = strace_counts(argv, here.parents[1])
    print(json.dumps({"processes": counted, "strace": traced}, indent=1))


if __name__ == "__main__":
    main()
