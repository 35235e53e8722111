"""Prompt templates and allowed tools per step type.

Static text comes first (the system prompt, then the tool definitions the request carries), and
the per-step context comes last, so a provider's prompt cache can serve the repeated prefix. Each
step gets only the context it needs, not the whole history.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stepswitch.policy.model import StepType

# One system prompt for every step type, so each worker's prompts share it as a cached prefix;
# the step's own instruction opens the user message.
SYSTEM_PROMPT = """\
You are one worker in Stepswitch, a coding agent that splits a task into steps and gives each \
step to the model that fits it. The steps, in order: plan, navigate (find the relevant files), \
read (take notes), run (reproduce with the project's commands), edit (change the code), then the \
project's own checks (format, lint, types, tests) decide whether the change is done; when they \
fail, triage (find the cause) and edit again; finally review and summarize.

You do one step at a time. You act only through the tools this step offers, on a git worktree \
of the user's repository; paths are relative to its root. Tool results come back as messages. \
Work in small, checkable moves; read before you edit; keep changes minimal and in the style of \
the code around them. Never weaken or delete tests or checks to make them pass. When this \
step's job is done, call the `done` tool with a short summary: the next step sees only that \
summary, not this conversation.
"""

_STEP_TEXT: dict[StepType, str] = {
    StepType.PLAN: "Your step: PLAN. Look at the repository layout if you need to, then call "
    "`done` with a numbered plan of at most six lines: which files matter and what to change.",
    StepType.NAVIGATE: "Your step: NAVIGATE. Find the files the task touches: list folders, "
    "find files, search. Call `done` with the relevant paths, one per line, each with a reason.",
    StepType.READ: "Your step: READ. Read the files named below (ranges, not whole large "
    "files). Call `done` with notes: the functions, lines and facts the editor will need.",
    StepType.RUN: "Your step: RUN. Run the project's tests or a command that shows the current "
    "behaviour. Call `done` with what you ran and what it showed (failing test ids, errors).",
    StepType.EDIT: "Your step: EDIT. Change the code to complete the task: `edit` replaces an "
    "exact text that must occur once; `write_file` creates a file. Keep changes minimal. Then "
    "call `done` with what you changed. The project's checks run after you.",
    StepType.TRIAGE: "Your step: TRIAGE. The project's checks failed on the last change. Read "
    "the report and the code, run commands if needed, and call `done` with the cause and the "
    "fix to make, precisely (file, function, what to change).",
    StepType.REVIEW: "Your step: REVIEW. Judge whether the change below does the task correctly "
    "and safely. The project's checks already pass. Answer only with the JSON object asked for: "
    'a verdict ("approve" or "reject") and the reasons.',
    StepType.SUMMARIZE: "Your step: SUMMARIZE. Write the commit message for the change below: a "
    "subject line under 70 characters, a blank line, then at most five lines on what and why. "
    "Call `done` with it.",
}

ALLOWED_TOOLS: dict[StepType, frozenset[str]] = {
    StepType.PLAN: frozenset({"list_dir", "find_files", "done"}),
    StepType.NAVIGATE: frozenset({"list_dir", "find_files", "search", "done"}),
    StepType.READ: frozenset({"read", "search", "done"}),
    StepType.RUN: frozenset({"run", "read", "done"}),
    StepType.EDIT: frozenset({"read", "search", "edit", "write_file", "done"}),
    StepType.TRIAGE: frozenset({"read", "search", "run", "done"}),
    StepType.REVIEW: frozenset(),  # answers with a JSON verdict, no tools
    StepType.SUMMARIZE: frozenset({"done"}),
}

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


def system_prompt(step_type: StepType) -> str:
    """The same for every step type: the step's instruction goes in `step_context`."""
    return SYSTEM_PROMPT


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
    diagnosis: str = ""  # triage's answer
    review_feedback: str = ""
    diff: str = ""
    changed: list[str] = field(default_factory=list)


def _section(title: str, text: str) -> str:
    return f"## {title}\n{text.strip()}\n" if text.strip() else ""


# Which parts of the brief each step sees.
_SEES: dict[StepType, tuple[str, ...]] = {
    StepType.PLAN: ("task", "layout"),
    StepType.NAVIGATE: ("task", "plan", "layout"),
    StepType.READ: ("task", "plan", "files"),
    StepType.RUN: ("task", "plan", "files"),
    StepType.EDIT: (
        "task",
        "plan",
        "files",
        "notes",
        "observed",
        "gate_report",
        "diagnosis",
        "review_feedback",
    ),
    StepType.TRIAGE: ("task", "plan", "changed", "gate_report", "notes"),
    StepType.REVIEW: ("task", "diff"),
    StepType.SUMMARIZE: ("task", "diff"),
}

_TITLES = {
    "task": "Task",
    "layout": "Repository layout",
    "plan": "Plan",
    "files": "Relevant files",
    "notes": "Notes from reading",
    "observed": "What running showed",
    "gate_report": "Failing checks (latest)",
    "diagnosis": "Diagnosis",
    "review_feedback": "Reviewer's objections (fix these)",
    "changed": "Files changed so far",
    "diff": "The change (diff against the start)",
}


def step_context(step_type: StepType, brief: TaskBrief) -> str:
    parts = [_STEP_TEXT[step_type] + "\n"]
    for name in _SEES[step_type]:
        value = getattr(brief, name)
        text = "\n".join(value) if isinstance(value, list) else value
        parts.append(_section(_TITLES[name], text))
    return "\n".join(p for p in parts if p)
