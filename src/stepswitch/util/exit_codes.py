"""`ssw run`'s exit codes, in one table: the run's end sets them, `ssw run --help` lists them."""

from __future__ import annotations

DONE = 0
NOT_DONE = 1
BAD_INPUT = 2
INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a process Ctrl-C stopped

RUN_EXIT_CODES: tuple[tuple[int, str], ...] = (
    (DONE, "done: the gates passed (or the repository has none) and the change is committed"),
    (
        NOT_DONE,
        "not done: the gates never passed, a limit (steps, time, dollars) stopped the run, the "
        "reviewer rejected the change on every rung, no edit changed a file, or a provider "
        "failed; what there is stays committed on the branch",
    ),
    (
        BAD_INPUT,
        "bad input or configuration, said in one line naming it: a flag, a file, a policy, a "
        "preset, a gate table, a key missing or refused by its provider",
    ),
    (INTERRUPTED, "interrupted by Ctrl-C or SIGTERM: the record says where it stopped"),
)
