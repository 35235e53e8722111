"""The one exception hierarchy. Each error carries a one-line message the CLI prints as is."""

from __future__ import annotations

from typing import Literal


class SswError(Exception):
    """Base of every error Stepswitch raises on purpose."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        # The CLI prints one line: fold any newline a caller let through.
        super().__init__(" ".join(message.split()))

    @property
    def message(self) -> str:
        return str(self)


class UsageError(SswError):
    """The user asked for something that cannot be done as asked (bad flag, unknown name)."""

    exit_code = 2  # util/exit_codes.BAD_INPUT (util imports errors: the test holds them equal)


class GitFailed(UsageError):
    """A git command ssw ran on a repository failed (a full disk, a damaged repository): said as
    git said it, exit 1, since the input was not at fault."""

    exit_code = 1


class GitTimedOut(UsageError):
    """A git command that did not finish in its time (its process group was killed)."""


class UnsafeCheckout(UsageError):
    """A commit ssw was asked to check out holds a path it would write outside the folder or
    through a link (a `..` or `.git` entry, a name twice): refused, the message names the path."""


class ChangeConflicts(SswError):
    """A run's change does not apply to the checkout's branch (`ssw runs apply`): the merge or
    cherry-pick was aborted and the checkout is as it was. Exit 1: nothing asked was wrong."""


class ConfigError(UsageError):
    """A file the user controls is malformed: names the file, the key and the fix."""

    def __init__(self, file: str, key: str, problem: str, fix: str = "") -> None:
        self.file = file
        self.key = key
        self.problem = problem
        self.fix = fix
        text = f"{file}: {key}: {problem}"
        if fix:
            text += f" (fix: {fix})"
        super().__init__(text)


class ProviderError(SswError):
    """A provider call failed or answered something we cannot read.

    `raw_body` keeps what the provider sent, with secrets removed, for the record. `refused`:
    the provider answered with an HTTP error status before generating anything (the wire client
    sets it; an error event inside a stream is not one).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        raw_body: str = "",
        request_id: str | None = None,
        refused: bool = False,
    ) -> None:
        self.status = status
        self.raw_body = raw_body
        self.request_id = request_id
        self.refused = refused
        super().__init__(message)


class AuthError(ProviderError):
    """401/403 or a missing key: never retried."""

    exit_code = 2


class MalformedResponse(ProviderError):
    """The provider answered, but not in the shape its wire format promises."""


class RetriesExhausted(ProviderError):
    """Every allowed attempt failed with a retryable error."""


class DeadlineExceeded(ProviderError):
    """The call could not finish inside the worker's timeout or the run's remaining time."""


# The outcomes a RunStopped ends a run with: run.json's (records.run.Outcome) other than done,
# interrupted and harness_error.
StopOutcome = Literal["limit", "gates_failed", "rejected", "no_change", "error"]


class RunStopped(SswError):
    """A run ended before its change was done: a limit, the gates on every rung, a provider."""

    def __init__(self, outcome: StopOutcome, message: str) -> None:
        self.outcome: StopOutcome = outcome
        super().__init__(message)


class HarnessError(SswError):
    """A bug or breakage in Stepswitch itself (not the model's change, not the user's input):
    the run stops as `harness_error` instead of paying a model to "fix" our own exception."""


class Interrupted(KeyboardInterrupt):
    """SIGTERM (or another signal ssw turns into an interruption) arrived during a run."""

    def __init__(self, signal_name: str) -> None:
        self.signal_name = signal_name
        super().__init__(signal_name)
