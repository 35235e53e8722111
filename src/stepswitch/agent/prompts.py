"""Prompts: the shared system prompt, the brief steps pass on, and each step's user message.

Static text comes first (the system prompt, then the tool definitions the request carries), and
the per-step context comes last, so a provider's prompt cache can serve the repeated prefix. Each
step gets only the context it needs, not the whole history.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stepswitch.steps import STEPS, StepType

# One system prompt for every step type, so each worker's prompts share it as a cached prefix;
# the step's own instruction opens the user message.
SYSTEM_PROMPT = """\
You are one worker in Stepswitch, a coding agent that splits a task into steps and gives each \
step to the model that fits it. The steps, in order: plan, navigate (find the relevant files), \
read (take notes), run (reproduce with the project's commands), edit (change the code), then the \
project's own checks (format, lint, types, tests) decide whether the change is done; when they \
fail, triage (find the cause) and edit again; finally review and summarize.

You do one step at a time. You act only through the tools this step offers, on a copy of the \
user's repository that holds no git metadata (git commands find no repository there; ssw \
commits the change for you); paths are relative to its root. Tool results come back as \
messages. \
Work in small, checkable moves; read before you edit; keep changes minimal and in the style of \
the code around them. Never weaken or delete tests or checks to make them pass. When this \
step's job is done, call the `done` tool with a short summary: the next step sees only that \
summary, not this conversation.
"""

REVIEW_SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["approve", "reject"]},
        "reasons": {"type": "string"},
    },
    "required": ["verdict", "reasons"],
    "additionalProperties": False,
}

NUDGE = (
    "Reply with a tool call, not prose. The tools for this step are: {tools}. "
    "When the step's job is done, call `done` with your summary."
)


@dataclass
class TaskBrief:
    """What the steps pass on to each other: summaries, never whole conversations."""

    task: str
    layout: str = ""  # the top of the repository, listed once at the start
    plan: str = ""
    files: str = ""  # navigate's answer
    notes: str = ""  # read's answer
    observed: str = ""  # run's answer
    gate_report: str = ""  # the last failing gate report
    earlier_gate_reports: list[str] = field(default_factory=list)  # older failures, oldest first
    diagnosis: str = ""  # triage's answer
    review_feedback: str = ""
    diff: str = ""
    changed: list[str] = field(default_factory=list)


def _section(title: str, text: str) -> str:
    return f"## {title}\n{text.strip()}\n" if text.strip() else ""


_TITLES = {
    "task": "Task",
    "layout": "Repository layout",
    "plan": "Plan",
    "files": "Relevant files",
    "notes": "Notes from reading",
    "observed": "What running showed",
    "earlier_gate_reports": "Earlier failing checks (oldest first)",
    "gate_report": "Failing checks (latest)",
    "diagnosis": "Diagnosis",
    "review_feedback": "Reviewer's objections (fix these)",
    "changed": "Files changed so far",
    "diff": "The change (diff against the start)",
}


def step_context(step_type: StepType, brief: TaskBrief) -> str:
    spec = STEPS[step_type]
    parts = [spec.instruction + "\n"]
    for name in spec.sees:
        value = getattr(brief, name)
        joiner = "\n\n" if name == "earlier_gate_reports" else "\n"
        text = joiner.join(value) if isinstance(value, list) else value
        parts.append(_section(_TITLES[name], text))
    return "\n".join(p for p in parts if p)
