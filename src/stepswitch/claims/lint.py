"""The number lint of every Markdown file the repository ships (claims/shipped.py says which).

Every number a reader sees is rendered from evidence (inside a claim marker) or exempted by a
rule with its reason. Three layers, each blanking what it exempts before the next looks:

- structure (RULES_STRUCTURE): claim markers and the claims index (rendered), HTML comments,
  code (a fenced block with a code language or made of command lines; a code span that
  is a path, a command, an option or code, never one that is a quantity: `30.6 s`, `x10`, `0.30`),
  though a comment in a code block (`# about 90 s`) is prose; link targets and URLs, and names
  that hold digits (`sha256`, `gpt-5-mini`, `Version-1`; never a multiplier, `x10`);
- context (RULES_CONTEXT): versions, dates, decision record and issue numbers, exit codes, HTTP
  status codes, addresses, signals; never a number with a unit of measure next to it (`ms`, `s`,
  `%`, `x`, `times`, ...) nor one of a count (`404 of 500`), which is a quantity: a claim, or an
  entry of readme.allow;
- readme.allow in claims.yaml: the few quantities that are facts of the code (limits and
  defaults, like "stops after 600 s"), each naming the constant that holds it (claims/allowed.py).

Inside `<!-- claims-section -->` only markers, comments and readme.allow exempt anything, as
before. Everywhere (code aside), a number spelled as a word beside a comparison or a unit ("three
times", "sixty to ninety percent", "twice as fast", "halves", "a third of", "dozens of times") is
a finding too. A decision record or a bench README may keep figures inside a measured note that
names their day and commit (claims/measured.py); elsewhere a note blesses nothing (ADR 0077).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from stepswitch.claims import measured, readme
from stepswitch.claims.allowed import Allowed, allowed, match_problem
from stepswitch.claims.git_view import GitView
from stepswitch.claims.lint_patterns import (
    LABELS,
    RULES_CONTEXT,
    Finder,
    Span,
    matches,
)
from stepswitch.claims.model import NUMBER, Claims

_UNITS_WORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen)"
)
_TENS_WORD = r"(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)"
_LARGE_WORD = r"(?:a |one )?(?:hundred|thousand|million|billion|dozen)"
# Every number word: units, tens and their compounds (sixty-five), and the large ones.
NUM_WORD = rf"(?:{_TENS_WORD}(?:[- ]{_UNITS_WORD})?|{_UNITS_WORD}|{_LARGE_WORD}|zero)"
# A unit of measure a number word may come before (twenty seconds, ninety tasks).
_WORD_UNIT = (
    r"(?:milliseconds?|seconds?|minutes?|hours?|days?|tokens?|tests?|tasks?|steps?|calls?|runs?"
    r"|mutations?|points?|dollars?|cents?|bytes?|kilobytes?|megabytes?|gigabytes?|lines?|files?)"
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
            rf"\b{NUM_WORD}(?:[- ]to[- ]{NUM_WORD})?\s+(?:percent|per cent|percentage points?)\b",
            r"\borders?\s+of\s+magnitude\b",
            # dozens of times, hundreds of tests, tens of thousands of tokens
            r"\b(?:tens|dozens|hundreds|thousands|millions|billions)\s+of\b",
            # a number word of twenty and more before a unit (sixty seconds, ninety tasks)
            rf"(?<!per )\b(?:{_TENS_WORD}(?:[- ]{_UNITS_WORD})?|{_LARGE_WORD})"
            rf"(?:[- ]to[- ]{NUM_WORD})?[- ]{_WORD_UNIT}\b",
        )
    ),
    re.IGNORECASE,
)


FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^\n]*)\n(.*?)^ {0,3}\1[^\n]*$", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)((?:(?!\n\s*\n).)+?)(?<!`)\1(?!`)", re.S)
# A fenced block in one of these is code; so is one made of command lines (code_block).
CODE_LANGUAGES = frozenset(
    {"sh", "bash", "shell", "zsh", "python", "py", "toml", "yaml", "yml", "json", "ini", "diff"}
)
COMMANDS = frozenset(
    {
        *("ssw", "python", "python3", "pip", "pytest", "git", "bash", "sh", "uv", "make"),
        *("ruff", "mypy", "vulture", "mkdocs", "export", "cd", "curl", "kill", "docker", "dask"),
    }
)
# A comment in a code block (`# about 90 s`): prose, linted as prose.
_COMMENT = re.compile(r"(?:^|(?<=\s))#(?!!)[^\n]*", re.M)
# A span that is a quantity: digits, and no word but units and joining words (`30.6 s`, `x10`,
# `3.1x`, `40%`, `404 of 500`, `5.9 ms/step`, `12.1 (11.6-13.3)`).
_QUANTITY_WORDS = frozenset(
    {
        *("ms", "s", "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes"),
        *("h", "hr", "hrs", "hour", "hours", "day", "days", "x", "times", "fold", "percent"),
        *("k", "m", "g", "b", "kb", "mb", "gb", "kib", "mib", "gib", "byte", "bytes", "pct"),
        *("token", "tokens", "test", "tests", "task", "tasks", "step", "steps", "call", "calls"),
        *("run", "runs", "point", "points", "pts", "usd", "dollars", "per", "of", "out", "to"),
        *("and", "or", "vs"),
    }
)
# What code holds and a quantity does not (a quantity may hold / ( ) - < > $ %).
_NOT_QUANTITY = re.compile(r"[\\_=\[\]{}'\"|@#;:`]")


def _quantity(text: str) -> bool:
    if _NOT_QUANTITY.search(text) or not re.search(r"\d", text):
        return False
    return all(word.lower() in _QUANTITY_WORDS for word in re.findall(r"[A-Za-z]+", text))


# A path, an option, an assignment or code: a character prose does not hold.
_CODE_CHARS = re.compile(r"[/\\=()\[\]{}<>_:'\"$*|@#;]|^-")


def _command_line(line: str) -> bool:
    """A shell command: its first word (past `$ ` and NAME=value) a program or a path."""
    words = line.strip().removeprefix("$ ").split()
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
        words = words[1:]
    return bool(words) and (words[0] in COMMANDS or "/" in words[0])


_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")


def code_block(info: str, body: str) -> bool:
    """A fenced block is code: in a code language, or every line a command, the continuation of
    one (after a trailing backslash, or indented), a comment or a here-document's text. Anything
    else (a command's output below it) makes the block output and prose, linted."""
    language = info.strip().split(" ")[0].lower() if info.strip() else ""
    if language in CODE_LANGUAGES:
        return True
    lines = [line for line in body.splitlines() if line.strip()]
    heredoc: str | None = None
    previous = ""
    for line in lines:
        if heredoc is not None:
            heredoc = None if line.strip() == heredoc else heredoc
        elif not (
            previous.rstrip().endswith("\\")
            or line.startswith((" ", "\t"))
            or line.lstrip().startswith("#")
            or _command_line(line)
        ):
            return False
        else:
            opened = _HEREDOC.search(line)
            heredoc = opened.group(1) if opened else None
        previous = line
    return bool(lines)


def code_span(inner: str) -> bool:
    """An inline code span is a path, a command, an option or code, and not a quantity."""
    text = inner.strip()
    if not text or _quantity(text):
        return False
    if _CODE_CHARS.search(text) or _command_line(text):
        return True
    # one name: sha256, results.json, a run's id (20261201-090428-98debe)
    return " " not in text and any(c.isalpha() for c in text)


def _fenced(text: str) -> Iterator[Span]:
    for m in FENCE.finditer(text):
        if not code_block(m.group(2), m.group(3)):
            yield m.start(), m.start(3)  # the fences; what is between them is linted
            yield m.end(3), m.end()
            continue
        at = m.start()
        for comment in _COMMENT.finditer(text, m.start(3), m.end(3)):
            yield at, comment.start()
            at = comment.end()
        yield at, m.end()


def _code_spans(text: str) -> Iterator[Span]:
    for m in CODE_SPAN.finditer(text):
        if code_span(m.group(2)):
            yield m.span()


RULES_STRUCTURE: tuple[tuple[str, Finder, str], ...] = (
    ("fenced", _fenced, "code blocks (a code language, or a command first), but their comments"),
    ("code span", _code_spans, "paths, commands, options and code, never a quantity"),
    (
        "link target",
        matches(re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)|^\s*\[[^\]]+\]:\s*\S+", re.M)),
        "a link's address",
    ),
    ("url", matches(re.compile(r"\b(?:https?|file)://\S+")), "an address"),
    (
        "name",
        matches(
            re.compile(
                r"\b(?![x\u00d7]\d)(?=[-\w./]*\d)[A-Za-z][A-Za-z0-9]*(?:[-_./][A-Za-z0-9]+)+\b"
                r"|\b(?![x\u00d7]\d)[A-Za-z]+\d+[A-Za-z0-9]*\b"
            )
        ),
        "a name that holds digits (sha256, gpt-5-mini, C-001, Version-1), never a multiplier",
    ),
)


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    text: str  # the number or the words, as written
    source: str  # the line it is on
    in_section: bool
    spelled: bool
    why: str = ""  # a finding of its own kind (a measured note, a readme.allow entry)

    def __str__(self) -> str:
        line = self.source.strip()
        if len(line) > 110:
            line = line[:107] + "..."
        if self.why:
            return f"{self.file}:{self.line}: {self.why}: {line!r}"
        where = "in a claims section " if self.in_section else ""
        kind = "a figure spelled out" if self.spelled else "rendered from evidence"
        fix = (
            "say it without the figure, or put it in a claim marker"
            if self.spelled
            else "put it in a claim marker, or allow it in claims.yaml readme.allow with the "
            "constant that holds it"
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
    for pattern in (readme.MARKER, readme.INDEX, readme.COMMENT, LABELS):
        text = _blank_all(text, (m.span() for m in pattern.finditer(text)))
    return text


def _general(text: str) -> str:
    for _, finder, _ in (*RULES_STRUCTURE, *RULES_CONTEXT):
        text = _blank_all(text, finder(text))
    return text


def _allowed(text: str, entries: list[Allowed], problems: list[tuple[int, str]]) -> str:
    """`text` with what readme.allow blesses blanked; a match that holds another number than its
    entry's value, or none, is a problem (and stays)."""
    spans = []
    for entry in entries:
        for m in entry.pattern.finditer(text):
            problem = match_problem(entry, m.group())
            if problem is None:
                spans.append(m.span())
            elif problem:
                problems.append((m.start(), problem))
    return _blank_all(text, iter(spans))


def _section_spans(text: str) -> list[Span]:
    return [m.span(1) for m in readme.SECTION.finditer(text)]


def _notes(
    text: str, name: str, git: GitView | None, problems: list[tuple[int, str]]
) -> list[Span]:
    """The bodies of the measured notes that keep history (claims/measured.py); each note that
    does not is a problem, and so is any note outside a record."""
    kept = []
    for note in measured.notes(text):
        if not measured.is_record(name):
            problems.append(
                (
                    note.start,
                    "a measured note keeps figures only in a decision record or a bench README; "
                    "here a figure is a claim",
                )
            )
            continue
        why = measured.note_problems(git, name, text, note)
        problems += [(note.start, w) for w in why]
        if not why:
            kept.append(note.body)
    code = [m.span() for pattern in (FENCE, CODE_SPAN) for m in pattern.finditer(text)]
    for at in measured.stray_markers(text):
        if any(start <= at < end for start, end in code):
            continue  # the syntax shown as an example
        problems.append(
            (at, "a measured note is <!-- measured YYYY-MM-DD at COMMIT -->...<!-- /measured -->")
        )
    return kept


def lint_text(text: str, claims: Claims, name: str, git: GitView | None = None) -> list[Finding]:
    """Findings in one Markdown file, in line order: typed numbers, spelled-out figures, measured
    notes that keep no history, readme.allow matches that hold another number than their value.
    Without `git`, measured notes are taken as they are written."""
    lines = text.splitlines()
    entries = allowed(claims.readme.allow, claims.allow)
    problems: list[tuple[int, str]] = []
    base = _blank_all(_structural(text), iter(_notes(text, name, git, problems)))
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
        general = part if in_section else _general(part)
        digits = _allowed(general, entries, problems)
        # readme.allow blesses a value the code holds, never a figure spelled out beside it.
        for m in SPELLED.finditer(general):
            found.append(
                (m.start(), _finding(name, text, lines, m.start(), m.group(), in_section, True))
            )
        for m in NUMBER.finditer(digits):
            number = m.group().rstrip(".,")
            found.append(
                (m.start(), _finding(name, text, lines, m.start(), number, in_section, False))
            )
    for at, why in problems:
        found.append((at, _finding(name, text, lines, at, "", False, False, why)))
    return [f for _, f in sorted(found, key=lambda pair: pair[0])]


def _finding(
    name: str,
    text: str,
    lines: list[str],
    at: int,
    shown: str,
    in_section: bool,
    spelled: bool,
    why: str = "",
) -> Finding:
    line = text.count("\n", 0, at) + 1
    return Finding(name, line, " ".join(shown.split()), lines[line - 1], in_section, spelled, why)


def lint_pages(texts: Mapping[str, str], claims: Claims, git: GitView | None = None) -> list[str]:
    """Problem lines for each file (the README, rendered, the docs site's pages as `ssw prove`
    renders them, and every other Markdown file shipped), one finding per line, in the order
    given."""
    return [str(f) for rel, text in texts.items() for f in lint_text(text, claims, rel, git)]


__all__ = ["RULES_CONTEXT", "RULES_STRUCTURE", "Finding", "lint_pages", "lint_text"]
