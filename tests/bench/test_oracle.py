"""The built-in contestants answer by the step the request names, not by the tools it offers."""

from __future__ import annotations

import json
import time

from stepswitch.bench.oracle import BuiltinProvider, ReferenceChange
from stepswitch.steps import StepType
from stepswitch.wire.types import Message, Request

FIRST_TURN = (Message("user", "the step's brief"),)


def answer(provider: BuiltinProvider, step: StepType):
    request = Request(model="oracle", messages=FIRST_TURN, step_type=step)  # no tools offered
    return provider.complete(request, deadline=time.monotonic() + 10)


def test_the_oracle_makes_its_change_in_the_steps_the_request_names():
    change = ReferenceChange(writes={"calc.py": "x = 1\n"}, deletions=("old.py",))
    oracle = BuiltinProvider("oracle", change)

    assert [c.name for c in answer(oracle, StepType.PLAN).message.tool_calls] == ["done"]
    [run] = answer(oracle, StepType.RUN).message.tool_calls
    assert (run.name, json.loads(run.arguments)) == ("run", {"command": "rm -f -- old.py"})
    [write] = answer(oracle, StepType.EDIT).message.tool_calls
    assert (write.name, json.loads(write.arguments)["path"]) == ("write_file", "calc.py")
    review = answer(oracle, StepType.REVIEW)
    assert json.loads(review.message.content)["verdict"] == "approve"


def test_null_changes_nothing_whatever_the_step():
    null = BuiltinProvider("null", None)
    for step in (StepType.RUN, StepType.EDIT):
        assert [c.name for c in answer(null, step).message.tool_calls] == ["done"]
