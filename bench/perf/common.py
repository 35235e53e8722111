"""Helpers both benchmark processes share: server timing, direct command timing, statistics.

Standard library only. The loopback server is stepswitch's own (src/stepswitch/fakes/loopback.py,
which imports only the standard library); the mini-swe-agent process loads that file by path,
so both agents talk to the same server code: HTTP/1.1 keep-alive, TCP_NODELAY, one write per
reply.
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[2]
LOOPBACK_PY = REPO / "src" / "stepswitch" / "fakes" / "loopback.py"


def load_loopback_by_path() -> ModuleType:
    """stepswitch/fakes/loopback.py as a standalone module, for a process without stepswitch."""
    spec = importlib.util.spec_from_file_location("bench_loopback", LOOPBACK_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


class ServerClock:
    """Time inside the server: from the moment a request line has arrived (parse_request) to
    the end of the reply write (do_POST returns). Waiting for the next request on a kept-alive
    connection is not counted; header parsing, body read, the responder and the write are."""

    def __init__(self) -> None:
        self.total_s = 0.0
        self.requests = 0
        self.first_request_at: float | None = None  # time.perf_counter() of the first request
        self.first_request_event = threading.Event()
        self._lock = threading.Lock()

    def instrument(self, loopback: ModuleType) -> None:
        handler = loopback._Handler
        original_parse: Callable[[Any], bool] = handler.parse_request
        original_post: Callable[[Any], None] = handler.do_POST
        clock = self

        def parse_request(self: Any) -> bool:
            self._bench_began = time.perf_counter()
            with clock._lock:
                if clock.first_request_at is None:
                    clock.first_request_at = self._bench_began
                    clock.first_request_event.set()
            return original_parse(self)

        def do_post(self: Any) -> None:
            try:
                original_post(self)
            finally:
                spent = time.perf_counter() - self._bench_began
                with clock._lock:
                    clock.total_s += spent
                    clock.requests += 1

        handler.parse_request = parse_request
        handler.do_POST = do_post


def time_command(command: str, cwd: Path, env: dict[str, str], *, shell_list: bool) -> float:
    """One direct run of a command with Popen, stdout piped and read to the end, as the agents
    do. shell_list: ["bash", "-c", cmd] as ssw runs it; otherwise shell=True as mini runs it."""
    began = time.perf_counter()
    if shell_list:
        proc = subprocess.Popen(
            ["bash", "-c", command],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    else:
        proc = subprocess.Popen(
            command,
            shell=True,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    proc.communicate()
    return time.perf_counter() - began


def commands_time(
    commands: list[str], cwd: Path, env: dict[str, str], *, shell_list: bool, repeats: int = 5
) -> tuple[float, list[dict[str, Any]]]:
    """Sum over `commands` (in the order the agent ran them) of each command's median direct
    time over `repeats` runs; and the per-command detail."""
    medians: dict[str, float] = {}
    samples: dict[str, list[float]] = {}
    for command in dict.fromkeys(commands):
        samples[command] = [
            time_command(command, cwd, env, shell_list=shell_list) * 1000 for _ in range(repeats)
        ]
        medians[command] = statistics.median(samples[command]) / 1000
    detail = [
        {
            "command": portable(c.splitlines()[0][:80]),
            "median_ms": round(medians[c] * 1000, 3),
            "samples_ms": samples[c],  # the raw timings the median comes from (ADR 0026)
        }
        for c in commands
    ]
    return sum(medians[c] for c in commands), detail


def common_prefix_len(a: str, b: str) -> int:
    """How many leading characters two strings share (what a prefix cache could serve)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def tokens(chars: int) -> int:
    """The scripted provider's estimate: 4 characters a token (stepswitch/scripted.py)."""
    return max(1, (chars + 3) // 4)


def summary(values: list[float]) -> dict[str, Any]:
    """A figure as results.json keeps it: every raw sample, and the summary the claims engine
    recomputes from them (a summary alone is not trusted, ADR 0026)."""
    return {
        "samples": list(values),
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


def portable(text: str) -> str:
    """`text` with this machine's paths taken out: the checkout's own folder becomes a path
    relative to it, the temp folder `<tmp>` and the home folder `~`, so results.json can be
    re-checked on any clone (the claims engine refuses an absolute machine path, ADR 0026)."""
    import re
    import tempfile

    def swap(text: str, folder: str, placeholder: str) -> str:
        # The folder itself or a path in it, not a sibling that starts alike (`/tmp/ab-x`).
        return re.sub(re.escape(folder) + r"(?![\w.-])", placeholder, text)

    repo = REPO.as_posix()
    text = swap(text.replace(repo + "/", ""), repo, ".")
    for folder, placeholder in (
        (Path(tempfile.gettempdir()).resolve().as_posix(), "<tmp>"),
        (Path.home().as_posix(), "~"),
    ):
        if folder not in ("", "/"):
            text = swap(text, folder, placeholder)
    return text


def emit(result: dict[str, Any]) -> None:
    """The child's one line of output: its result as JSON on stdout."""
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
