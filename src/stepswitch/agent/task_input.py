"""`--task-file`: read the task, refusing a file larger than any model could be sent."""

from __future__ import annotations

import stat
from pathlib import Path

from stepswitch.errors import ConfigError
from stepswitch.util.inputs import read_text_input

# 1 MiB: the largest context window in the registry is 1,048,576 tokens, and the ledger refuses a
# prompt whose bound (a token a byte, plus 1,024) passes the window (ADR 0025), so a task file
# above this is refused by every model at its first call: refuse it before anything is made.
MAX_TASK_BYTES = 1 << 20
_FIX = "put what to do in the file and leave the material in the repository for the agent to read"


def _too_big(path: Path, size: int) -> ConfigError:
    return ConfigError(
        str(path),
        "(file)",
        f"is {size:,} bytes, more than a task file may be ({MAX_TASK_BYTES:,} bytes, 1 MiB)",
        _FIX,
    )


def read_task_file(path: Path) -> str:
    """The task in `path`; a ConfigError (exit 2) when it is too large, or as read_text_input."""
    try:
        info = path.stat()
    except OSError:
        info = None  # read_text_input names what is wrong with it
    if info is not None and stat.S_ISREG(info.st_mode) and info.st_size > MAX_TASK_BYTES:
        raise _too_big(path, info.st_size)  # never read into memory
    text = read_text_input(path, "task file", "name a text file that says the task")
    size = len(text.encode("utf-8"))
    if size > MAX_TASK_BYTES:  # a pipe or a file that grew: its size was not known before
        raise _too_big(path, size)
    return text
