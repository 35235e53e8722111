"""`ssw run --record FILE`: every reply a run's models give, written as a script that replays the
same run later with no key and no network (`ssw run PATH --script FILE`), on the scripted
provider and labelled scripted like any script (ADR 0036).

The file is rewritten whole, by rename, after each reply: a run that ends anywhere leaves a
script of the replies it had. It holds the replies and a replay policy (the run's policy with
every worker on the scripted provider, the same model ids), never a key or a prompt.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Unpack

import yaml

from stepswitch.errors import UsageError
from stepswitch.fakes.scripted import ScriptedReply, ScriptedToolCall, ScriptedUsage
from stepswitch.policy.model import Policy, WorkerConfig
from stepswitch.registry.presets import SCRIPTED_PROVIDER
from stepswitch.wire.provider import CallLimits, Provider
from stepswitch.wire.types import Completion, FinishReason, Request

# agent.providers.ProviderFactory, named here: fakes sit below agent (tests/test_layers.py).
ProviderFactory = Callable[[str, WorkerConfig], Provider]
_FINISH: Mapping[FinishReason, str] = {
    FinishReason.STOP: "stop",
    FinishReason.EMPTY_STOP: "stop",
    FinishReason.TOOL_CALLS: "tool_calls",
    FinishReason.LENGTH: "length",
    FinishReason.LENGTH_IN_THINKING: "length",
}


def reply_of(completion: Completion, model: str) -> ScriptedReply:
    """The scripted reply that gives the run this completion again."""
    message, usage = completion.message, completion.usage
    return ScriptedReply(
        expect_model=model,
        content=message.content,
        reasoning=message.reasoning,
        tool_calls=[
            ScriptedToolCall(name=c.name, arguments=c.arguments) for c in message.tool_calls
        ],
        finish_reason=_FINISH.get(completion.finish_reason),
        usage=None
        if usage is None
        else ScriptedUsage(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cached_tokens=usage.cached_tokens,
            reasoning_tokens=usage.reasoning_tokens,
        ),
        omit_usage=usage is None,
    )


def replay_policy(policy: Policy) -> dict[str, Any]:
    """The policy as data, each worker moved to the scripted provider with its model id kept (a
    reply's expect_model checks that routing sent each call where the recorded run did)."""
    data = policy.model_dump(mode="json", exclude_none=True)
    for worker in data["workers"].values():
        worker["provider"] = SCRIPTED_PROVIDER
        for gone in ("base_url", "wire_format"):
            worker.pop(gone, None)
    data.setdefault("ledger", {})["allow_unpriced"] = True  # a replay calls nobody: $0
    return data


def check_record_path(path: Path) -> None:
    """Refused before anything is made: where --record cannot write its file."""
    if path.is_dir():
        raise UsageError(f"--record {path}: is a folder; name a file, e.g. run-script.yaml")
    if not path.parent.is_dir():
        raise UsageError(f"--record {path}: no folder {path.parent} to write it in")


class Recorder:
    """The replies so far, and the file they are written to."""

    def __init__(self, path: Path, policy: Policy, task: str) -> None:
        self.path = path
        self.replies: list[ScriptedReply] = []
        self._head = {
            "recorded": (
                f"ssw run --record on {datetime.now(UTC).isoformat(timespec='seconds')}, "
                f"task: {task.strip().splitlines()[0][:200] if task.strip() else ''}"
            ),
            "policy": replay_policy(policy),
        }

    def add(self, reply: ScriptedReply) -> None:
        self.replies.append(reply)
        data = {
            **self._head,
            "replies": [r.model_dump(mode="json", exclude_defaults=True) for r in self.replies],
        }
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
        fd, tmp = tempfile.mkstemp(prefix=".record-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


class _RecordingProvider:
    def __init__(self, inner: Provider, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder

    def complete(self, request: Request, **limits: Unpack[CallLimits]) -> Completion:
        completion = self.inner.complete(request, **limits)
        self.recorder.add(reply_of(completion, request.model))
        return completion


class RecordingProviders:
    """A ProviderFactory that records every completion its providers return."""

    def __init__(self, inner: ProviderFactory, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder
        self._open: dict[str, _RecordingProvider] = {}

    def __call__(self, name: str, worker: WorkerConfig) -> Provider:
        if name not in self._open:
            self._open[name] = _RecordingProvider(self.inner(name, worker), self.recorder)
        return self._open[name]
