"""A suite's command read as words, for the runners that narrow it (`cargo test` -> `cargo test
-p app`, `go test ./...` -> `go test ./calc`): only a simple command is read, anything the shell
would interpret (a pipe, a list, a redirection, a substitution, a variable) is left whole."""

from __future__ import annotations

import shlex

_SHELL = set("|&;<>()$`\n")


def command_words(command: str) -> list[str] | None:
    """The words of `command` when it is one simple command, else None."""
    if _SHELL & set(command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:  # an unclosed quote
        return None
    return words or None


def runs(words: list[str] | None, *prefix: str) -> bool:
    """Whether the command's words start with `prefix` (`runs(words, "cargo", "test")`)."""
    return words is not None and words[: len(prefix)] == list(prefix)
