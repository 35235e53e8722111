"""Where task runs execute: any `concurrent.futures.Executor`. Locally a process pool (spawned,
not forked: the main process has threads); `InlineExecutor` runs them in the calling process (one
worker, tests); a cluster's executor (dask.distributed's `client.get_executor()`) plugs in the
same way, given workers that can read the bench folder.

Pool workers ignore Ctrl-C and sit in a process group of their own (the main process decides,
and sends SIGTERM to the runs it stops), die with the main process (a kill -9 of the bench leaves
no worker running on), and get the provider keys through the pool's pipe, never their
environment or argv.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import ParamSpec, TypeVar

from stepswitch.bench.contestants import set_keys
from stepswitch.util.keys import held_keys
from stepswitch.util.lean_imports import leave_out_unused_imports

P = ParamSpec("P")
R = TypeVar("R")
_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the call: nothing would signal us
        os._exit(1)


def _start_worker(parent: int, keys: dict[str, str]) -> None:
    leave_out_unused_imports()  # as in the `ssw` process that started the pool
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Out of the bench's process group: a signal to the group (a terminal closing, a service
    # manager's stop, `kill -TERM -PGID`) reaches the main process only. An idle worker killed
    # by it would break the pool under the runs still going and lose their results.
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    die_with_parent(parent)
    set_keys(keys)


def local_executor(workers: int) -> Executor:
    """A pool of `workers` processes for task runs."""
    keys = held_keys()  # what `ssw`'s start took out of the environment the workers inherit
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(os.getpid(), keys),
    )


class InlineExecutor(Executor):
    """Runs each submitted call at once, in this process. Ctrl-C reaches the run itself."""

    def submit(self, fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> Future[R]:
        future: Future[R] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:
            future.set_exception(exc)
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        return None


def inline_executor(workers: int = 1) -> Executor:
    """Every task run in this process, one at a time (whatever `workers` says)."""
    return InlineExecutor()
