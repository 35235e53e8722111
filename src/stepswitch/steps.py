"""Step types and the one table of what each step is: its instruction, the parts of the brief it
sees, the tools it may call and how many turns its tool loop may take."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class StepType(StrEnum):
    PLAN = "plan"
    NAVIGATE = "navigate"
    READ = "read"
    EDIT = "edit"
    RUN = "run"
    TRIAGE = "triage"
    REVIEW = "review"
    SUMMARIZE = "summarize"


@dataclass(frozen=True)
class StepSpec:
    instruction: str  # opens the step's user message (the system prompt is shared by all)
    sees: tuple[str, ...]  # fields of the TaskBrief shown to the step, in order
    tools: frozenset[str]  # the tools it may call; none: it answers with JSON
    max_turns: int  # model calls in one pass of its tool loop


STEPS: dict[StepType, StepSpec] = {
    StepType.PLAN: StepSpec(
        "Your step: PLAN. Look at the repository layout if you need to, then call `done` with a "
        "numbered plan of at most six lines: which files matter and what to change.",
        ("task", "layout"),
        frozenset({"list_dir", "find_files", "done"}),
        4,
    ),
    StepType.NAVIGATE: StepSpec(
        "Your step: NAVIGATE. Find the files the task touches: list folders, find files, "
        "search. Call `done` with the relevant paths, one per line, each with a reason.",
        ("task", "plan", "layout"),
        frozenset({"list_dir", "find_files", "search", "done"}),
        6,
    ),
    StepType.READ: StepSpec(
        "Your step: READ. Read the files named below (ranges, not whole large files). Call "
        "`done` with notes: the functions, lines and facts the editor will need.",
        ("task", "plan", "files"),
        frozenset({"read", "search", "done"}),
        6,
    ),
    StepType.RUN: StepSpec(
        "Your step: RUN. Run the project's tests or a command that shows the current "
        "behaviour. Call `done` with what you ran and what it showed (failing test ids, errors).",
        ("task", "plan", "files"),
        frozenset({"run", "read", "done"}),
        4,
    ),
    StepType.EDIT: StepSpec(
        "Your step: EDIT. Change the code to complete the task: `edit` replaces an exact text "
        "that must occur once; `write_file` creates a file. Keep changes minimal. Then call "
        "`done` with what you changed. The project's checks run after you.",
        (
            "task",
            "plan",
            "files",
            "notes",
            "observed",
            "earlier_gate_reports",
            "gate_report",
            "diagnosis",
            "review_feedback",
        ),
        frozenset({"read", "search", "edit", "write_file", "done"}),
        12,
    ),
    StepType.TRIAGE: StepSpec(
        "Your step: TRIAGE. The project's checks failed on the last change. Read the report and "
        "the code, run commands if needed, and call `done` with the cause and the fix to make, "
        "precisely (file, function, what to change).",
        ("task", "plan", "changed", "earlier_gate_reports", "gate_report", "notes"),
        frozenset({"read", "search", "run", "done"}),
        6,
    ),
    StepType.REVIEW: StepSpec(
        "Your step: REVIEW. Judge whether the change below does the task correctly and safely. "
        "The project's checks already pass. Answer only with the JSON object asked for: a "
        'verdict ("approve" or "reject") and the reasons.',
        ("task", "diff"),
        frozenset(),
        2,
    ),
    StepType.SUMMARIZE: StepSpec(
        "Your step: SUMMARIZE. Write the commit message for the change below: a subject line "
        "under 70 characters, a blank line, then at most five lines on what and why. Call "
        "`done` with it.",
        ("task", "diff"),
        frozenset({"done"}),
        2,
    ),
}
