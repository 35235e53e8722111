"""The number lint of the README and of the docs site's pages (claims/pages.py says which).

Every number a reader sees is rendered from evidence (inside a claim marker) or exempted by a
rule with its reason. Three layers, each blanking what it exempts before the next looks:

- structure (RULES_STRUCTURE): claim markers and the claims index (rendered), HTML comments,
  fenced blocks and inline code spans (commands, options, code samples), link targets and URLs,
  and names that hold digits (`sha256`, `gpt-5-mini`, `Version-1`);
- context (RULES_CONTEXT): versions, dates, decision record and issue numbers, exit codes, HTTP
  status codes, addresses, signals; never a number with a unit of measure next to it (`ms`, `s`,
  `%`, `x`, `times`, ...), which is a quantity: a claim, or an entry of readme.allow;
- readme.allow in claims.yaml: the few quantities that are facts of the code (limits and
  defaults, like "stops after 600 s"), each with its reason.

Inside `<!-- claims-section -->` only markers, comments and readme.allow exempt anything, as
before. Everywhere (code aside), a number spelled as a word beside a comparison ("three times",
"twice as fast", "halves", "a third of") is a finding too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from stepswitch.claims import readme
from stepswitch.claims.model import NUMBER, Claims

Span = tuple[int, int]

# A quantity: a number followed by one of these is measured (or a limit), never a mere label.
UNIT = (
    r"(?!\s*(?:ms|s|sec|secs|seconds?|minutes?|min|hours?|h|%|x|\u00d7|times|fold|[kKMG]i?B|bytes?"
    r"|tokens?|tests?|tasks?|steps?|calls?|runs?|mutations?|points?|dollars?|USD)\b|\s*[%\u00d7])"
)
NUM_WORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty"
    r"|forty|fifty|a hundred|hundred|a thousand|thousand|a dozen|dozen)"
)
FRACTION = r"(?:half|halves|third|thirds|quarter|quarters|fifth|fifths|tenth|tenths|hundredth)"
SPELLED = re.compile(
    "|".join(
        (
            rf"\b{NUM_WORD}(?:[- ]to[- ]{NUM_WORD})?[- ]?(?:times|fold)\b",  # three (to six) times
            r"\b(?:twice|thrice)\s+(?:as|the|that|what|faster|slower|cheaper|more|less|fewer)\b",
            r"\b(?:halves|halved|halving|doubles|doubled|doubling|triples|tripled|tripling)\b",
            r"\b(?:quadruples|quadrupled|tenfold|hundredfold)\b",
            r"\b(?:in|by)\s+half\b|\bhalf\s+(?:as|the|of|a|an|what)\b",
            rf"\b(?:a|one|two|three|four|five|nine)[- ]{FRACTION}\s+(?:of|as|the|a|an)\b",
            rf"\b{NUM_WORD}\s+(?:percent|per cent|percentage points?)\b",
            r"\borders?\s+of\s+magnitude\b",
        )
    ),
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    why: str


def _rule(name: str, pattern: str, why: str, flags: int = 0) -> Rule:
    return Rule(name, re.compile(pattern, flags), why)


RULES_STRUCTURE = (
    _rule(
        "fenced", r"^ {0,3}(`{3,}|~{3,}).*?^ {0,3}\1[^\n]*$", "code samples and output", re.S | re.M
    ),
    _rule("code span", r"(`+)(?:(?!\n\s*\n).)+?(?<!`)\1(?!`)", "commands, options, literals", re.S),
    _rule(
        "link target",
        r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)|^\s*\[[^\]]+\]:\s*\S+",
        "a link's address",
        re.M,
    ),
    _rule("url", r"\b(?:https?|file)://\S+", "an address"),
    _rule(
        "name",
        r"\b[A-Za-z][A-Za-z0-9]*(?:[-_./][A-Za-z0-9]+)+\b|\b[A-Za-z]+\d+[A-Za-z0-9]*\b",
        "a name that holds digits (sha256, gpt-5-mini, C-001, Version-1)",
    ),
)

_SIGNAL_OR_EXIT = re.compile(r"\bexit|\binterrupt|Ctrl-C|\bSIG[A-Z]+", re.IGNORECASE)


def _sentences(text: str) -> Iterator[Span]:
    start = 0
    for m in re.finditer(r"[.!?](?=\s)|\n\s*\n", text):
        yield start, m.end()
        start = m.end()
    yield start, len(text)


def _exit_codes(text: str) -> Iterator[Span]:
    """ssw's exit codes (0, 1, 2, 130) in a sentence that speaks of exiting or interrupting."""
    for start, end in _sentences(text):
        if _SIGNAL_OR_EXIT.search(text, start, end):
            for m in re.finditer(
                rf"(?<![\d.,$])\b(?:0|1|2|130)\b(?![.,]\d){UNIT}", text[start:end]
            ):
                yield start + m.start(), start + m.end()


def _matches(pattern: re.Pattern[str]) -> Callable[[str], Iterator[Span]]:
    return lambda text: (m.span() for m in pattern.finditer(text))


def _ctx(pattern: str, flags: int = 0) -> Callable[[str], Iterator[Span]]:
    # Never after a currency sign or inside a longer number, never before a unit.
    return _matches(re.compile(rf"(?<![$\d.,])(?:{pattern}){UNIT}", flags))


# (name, finder, why): numbers that label something rather than measure it.
RULES_CONTEXT: tuple[tuple[str, Callable[[str], Iterator[Span]], str], ...] = (
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
    ("issue", _ctx(r"(?i:\bissues?\s+#?\d+\b)|(?<![\w&])#\d+\b"), "issue and pull-request ids"),
    ("address", _ctx(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "network addresses"),
    ("http status", _ctx(r"\b[1-5]xx\b|\b(?:40[0-9]|429|50[0-4])s?\b"), "HTTP status codes"),
    ("signal", _ctx(r"\bkill -\d+\b"), "a signal on a command line (kill -9)"),
    ("exit code", _exit_codes, "ssw's exit codes, where a sentence speaks of exiting"),
)


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    text: str  # the number or the words, as written
    source: str  # the line it is on
    in_section: bool
    spelled: bool

    def __str__(self) -> str:
        where = "in a claims section " if self.in_section else ""
        kind = "a figure spelled out" if self.spelled else "rendered from evidence"
        line = self.source.strip()
        if len(line) > 110:
            line = line[:107] + "..."
        fix = (
            "say it without the figure, or put it in a claim marker"
            if self.spelled
            else "put it in a claim marker, or allow it in claims.yaml readme.allow with a reason"
        )
        verb = "is" if self.spelled else "is not"
        return f"{self.file}:{self.line}: {self.text!r} {where}{verb} {kind}: {line!r} ({fix})"


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = " "


def _blank_all(text: str, spans: Iterator[Span]) -> str:
    chars = list(text)
    for start, end in list(spans):
        _blank(chars, start, end)
    return "".join(chars)


def _structural(text: str) -> str:
    # Marker contents are rendered from evidence (in the README and in every page, ADR 0066).
    for pattern in (readme.MARKER, readme.INDEX, readme.COMMENT):
        text = _blank_all(text, (m.span() for m in pattern.finditer(text)))
    return text


def _exempt(text: str, claims: Claims, general: bool) -> str:
    if general:
        for rule in RULES_STRUCTURE:
            text = _blank_all(text, (m.span() for m in rule.pattern.finditer(text)))
        for _, finder, _ in RULES_CONTEXT:
            text = _blank_all(text, finder(text))
    for pattern in claims.allow:
        text = _blank_all(text, (m.span() for m in pattern.finditer(text)))
    return text


def _section_spans(text: str) -> list[Span]:
    return [m.span(1) for m in readme.SECTION.finditer(text)]


def lint_text(text: str, claims: Claims, name: str) -> list[Finding]:
    """Findings in one Markdown file, in line order: typed numbers and spelled-out figures."""
    lines = text.splitlines()
    base = _structural(text)
    sections = _section_spans(text)
    # Outside a section the general rules apply; inside it only readme.allow, as the ADR says.
    outside = list(base)
    for start, end in sections:
        _blank(outside, start, end)
    inside = list(base)
    last = 0
    for start, end in [*sections, (len(text), len(text))]:
        _blank(inside, last, start)
        last = end
    found: list[tuple[int, Finding]] = []
    for part, in_section in (("".join(outside), False), ("".join(inside), True)):
        words = part if in_section else _exempt(part, claims, general=True)
        for m in SPELLED.finditer(_exempt(words, claims, general=False)):
            found.append(
                (m.start(), _finding(name, text, lines, m.start(), m.group(), in_section, True))
            )
        digits = _exempt(part, claims, general=not in_section)
        for m in NUMBER.finditer(digits):
            number = m.group().rstrip(".,")
            found.append(
                (m.start(), _finding(name, text, lines, m.start(), number, in_section, False))
            )
    return [f for _, f in sorted(found, key=lambda pair: pair[0])]


def _finding(
    name: str, text: str, lines: list[str], at: int, shown: str, in_section: bool, spelled: bool
) -> Finding:
    line = text.count("\n", 0, at) + 1
    return Finding(name, line, " ".join(shown.split()), lines[line - 1], in_section, spelled)


def lint_pages(texts: Mapping[str, str], claims: Claims) -> list[str]:
    """Problem lines for each page (the README, rendered, and the docs site's pages as `ssw prove`
    renders them), one finding per line, in the order given."""
    return [str(f) for rel, text in texts.items() for f in lint_text(text, claims, rel)]


__all__ = ["RULES_CONTEXT", "RULES_STRUCTURE", "Finding", "lint_pages", "lint_text"]
