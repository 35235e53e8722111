"""What a claim may say, by whose runs its evidence holds (issue 23, route 5; ADR 0027,
docs/decisions/0027-what-evidence-can-say.md).

A metric declares the kinds of contestant its evidence may come from (`Metric.evidence`) and, as it
reads them, notes whose runs it read and of which kind (`Inputs.contestant`):

- `model`: a policy whose workers call real providers: what a model did;
- `scripted`: replayed replies, no model called: the harness and its arithmetic, never a model's
  quality or pass rate, and a claim on it says "scripted";
- `simulated`: a population of stated assumptions played every model (ADR 0053): ssw's routing
  under those assumptions, its pass rates and dollars included, never a model or its quality,
  and a claim on it says "simulated";
- `oracle`, `null`: the built-ins that check the harness (the reference change, no change): no
  models either.

`ssw prove` reads the claim's title and statement against them (`word_problems`). Words are
matched by a short list (`SPEAKS`), placeholders included (`{treatment_pass_rate}` speaks of a
pass rate): a floor that catches a model-quality claim proved from a script, not a reading of
English; a reviewer still reads the claim. A metric may also name values a claim's statement must
show (`Metric.shows`; `shown_problems`): a paired claim shows its interval's width.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Literal

EvidenceKind = Literal["model", "scripted", "simulated", "oracle", "null"]

# What a claim's title or statement speaks of, by the words (and placeholders) it uses.
SPEAKS: dict[str, re.Pattern[str]] = {
    "models": re.compile(
        r"\b(?:models|LLMs?|Claude|GPT|Gemini|Llama|Qwen|DeepSeek|Mistral|Opus|Sonnet|Haiku)\b",
        re.I,
    ),
    "quality": re.compile(
        r"\b(?:quality|correct(?:ly|ness)?|accura(?:te|cy)|better|worse|smarter|"
        r"fix(?:es|ed|ing)?|solv(?:e|es|ed|ing)|resolv(?:e|es|ed|ing))\b",
        re.I,
    ),
    "pass rates": re.compile(r"pass[ _-]?rates?|\bsuccess rates?\b", re.I),
}
# What the runs of each kind of contestant cannot speak of.
CANNOT_SAY: dict[EvidenceKind, tuple[str, ...]] = {
    "model": (),
    "scripted": ("models", "quality", "pass rates"),
    "simulated": ("models", "quality"),
    "oracle": ("models",),
    "null": ("models",),
}
SCRIPTED_WORD = re.compile(r"\bscripted\b", re.I)
SIMULATED_WORD = re.compile(r"\bsimulated\b", re.I)
# The kinds whose claims must name them in their statement, by the word.
_MUST_SAY: tuple[tuple[EvidenceKind, re.Pattern[str]], ...] = (
    ("scripted", SCRIPTED_WORD),
    ("simulated", SIMULATED_WORD),
)
# What each kind is, as a problem line says it.
_IS: dict[EvidenceKind, str] = {
    "model": "a model's",
    "scripted": "scripted (replayed replies, no model called: nothing of a model's quality or "
    "pass rate)",
    "simulated": "simulated (a population of stated assumptions played every model: its pass "
    "rates and dollars are the population's, nothing of a model)",
    "oracle": "the built-in oracle (the reference change: it checks the harness, it is no model)",
    "null": "the built-in null (no change: it checks the harness, it is no model)",
}


def _who(names: list[str]) -> tuple[str, str]:
    """The names as a sentence shows them (a long list cut short), and the verb for them."""
    if len(names) == 1:
        return names[0], "is"
    if len(names) > 3:
        return f"{names[0]}, {names[1]} and {len(names) - 2} more", "are"
    return f"{', '.join(names[:-1])} and {names[-1]}", "are"


def word_problems(title: str, statement: str, contestants: Mapping[str, EvidenceKind]) -> list[str]:
    """What the claim's title and statement say that the runs behind it cannot."""
    by_kind: dict[EvidenceKind, list[str]] = {}
    for who, kind in sorted(contestants.items()):
        by_kind.setdefault(kind, []).append(who)
    problems = []
    for kind, names in sorted(by_kind.items()):
        who, verb = _who(names)
        for topic in CANNOT_SAY[kind]:
            for part, text in (("title", title), ("statement", statement)):
                found = SPEAKS[topic].search(text)
                if found:
                    problems.append(
                        f"its {part} speaks of {topic} ({found.group(0)!r}), but {who} {verb} "
                        f"{_IS[kind]}"
                    )
    for said, word in _MUST_SAY:
        without = by_kind.get(said)
        if without and not word.search(statement):
            who, verb = _who(without)
            problems.append(
                f"it rests on {who}, which {verb} {said}, and its statement does not say "
                f"{said}: a reader must see that no model was called"
            )
    return problems


def shown_problems(statement: str, shows: Iterable[tuple[str, Iterable[str]]]) -> list[str]:
    """A value a metric wants shown (`(metric name, its values)`) that the statement does not."""
    return [
        f"its statement does not show {{{value}}}, which {metric} requires in a claim's "
        "statement (docs/decisions/0027-what-evidence-can-say.md)"
        for metric, values in shows
        for value in values
        if f"{{{value}}}" not in statement
    ]
