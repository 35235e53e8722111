"""The lint's patterns of what a number is: a quantity (a unit after it, N of M) or a label (a
version, a date, a decision record, a commit, an exit code...), the context rules `claims.lint`
applies before it looks for figures (ADR 0016, ADR 0077)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

Span = tuple[int, int]

# A quantity: a number followed by one of these is measured (or a limit), never a mere label.
UNIT = (
    r"(?!\s*(?:ms|s|sec|secs|seconds?|minutes?|min|hours?|h|%|x|\u00d7|times|fold|[kKMG]i?B|bytes?"
    r"|tokens?|tests?|tasks?|steps?|calls?|runs?|mutations?|points?|dollars?|USD)\b|\s*[%\u00d7])"
)
# N of M (404 of 500, 3 out of 4): a count, never a label.
COUNT = r"(?!\s+(?:out\s+)?of\s+\d)"
NOT_COUNTED = r"(?<!\d of )(?<!\d out of )"
Finder = Callable[[str], Iterator[Span]]


def matches(pattern: re.Pattern[str]) -> Finder:
    return lambda text: (m.span() for m in pattern.finditer(text))


_SIGNAL_OR_EXIT = re.compile(r"\bexit|\binterrupt|Ctrl-C|\bSIG[A-Z]+", re.IGNORECASE)


def _sentences(text: str) -> Iterator[Span]:
    start = 0
    for m in re.finditer(r"[.!?](?=\s)|\n\s*\n", text):
        yield start, m.end()
        start = m.end()
    yield start, len(text)


def _exit_codes(text: str) -> Iterator[Span]:
    """Exit codes (0 to 5, pytest's; 126 and 127, a shell's; 130, an interrupt) in a sentence that
    speaks of exiting or interrupting."""
    for start, end in _sentences(text):
        if _SIGNAL_OR_EXIT.search(text, start, end):
            for m in re.finditer(
                rf"(?<![\d.,$]){NOT_COUNTED}\b(?:[0-5]|12[67]|130)\b(?![.,]\d){UNIT}{COUNT}",
                text[start:end],
            ):
                yield start + m.start(), start + m.end()


def _ctx(pattern: str, flags: int = 0) -> Finder:
    # Never after a currency sign or inside a longer number, never before a unit, never a count.
    return matches(re.compile(rf"(?<![$\d.,]){NOT_COUNTED}(?:{pattern}){UNIT}{COUNT}", flags))


# (name, finder, why): numbers that label something rather than measure it.
RULES_CONTEXT: tuple[tuple[str, Finder, str], ...] = (
    (
        "version",
        _ctx(r"\b\d+(?:\.\d+){2,}\b|\b\d+\.\d+\+|(?i:\b(?:python|version)\s+\d+(?:\.\d+)*\+?)"),
        "versions (x.y.z, 3.12+, Python 3.11, version 2)",
    ),
    ("date", _ctx(r"\b\d{4}-\d{2}-\d{2}\b"), "dates of measurements and records"),
    (
        "decision record",
        _ctx(r"\bADRs? \d{4}\b|\b\d{4}-[a-z0-9-]+\.md\b|(?m:^# \d{4}\b)"),
        "decision record numbers",
    ),
    (
        "commit",
        _ctx(r"(?<=commit )[0-9a-f]{7,40}\b|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"),
        "a commit's hash (after `commit`, or hex digits with a letter among them)",
    ),
    (
        "year",
        _ctx(r"(?<=\()(?:19|20)\d\d(?=\))|(?<=\bin )(?:19|20)\d\d\b"),
        "a year, in parentheses or after `in`",
    ),
    ("issue", _ctx(r"(?i:\bissues?\s+#?\d+\b)|(?<![\w&])#\d+\b"), "issue and pull-request ids"),
    ("address", _ctx(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "network addresses"),
    ("http status", _ctx(r"\b[1-5]xx\b|\b(?:40[0-9]|429|50[0-4])s?\b"), "HTTP status codes"),
    ("signal", _ctx(r"\bkill -\d+\b"), "a signal on a command line (kill -9)"),
    ("exit code", _exit_codes, "ssw's exit codes, where a sentence speaks of exiting"),
    ("list item", _ctx(r"(?m:^[ \t]*\d{1,2}(?=\.[ \t]))"), "an ordered list's item numbers"),
    (
        "model name",
        _ctx(
            r"\b(?:Claude(?: (?:Sonnet|Opus|Haiku))?|Sonnet|Opus|Haiku|Gemini|GPT|Llama|Qwen"
            r"|DeepSeek|Mistral|Kimi|GLM)[ -]\d+(?:\.\d+)?\b"
        ),
        "a model's name (Claude Haiku 4.5, Gemini 3.1 Pro)",
    ),
    (
        "price unit",
        _ctx(r"\$\s*/\s*1M(?:\s+tokens)?\b"),
        "the unit of a price: dollars per million tokens",
    ),
    ("zero dollars", _ctx(r"\$0(?:\.0+)?(?!\.?\d)"), "a bill of nothing, never a saving"),
)

# Labels, exempt everywhere (in a claims section too): claim ids, the hash's name, decision
# record files.
LABELS = re.compile(r"\bC-\d{3,}\b|\bsha256\b|\b\d{4}-[a-z0-9-]+\.md\b")
