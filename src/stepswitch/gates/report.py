"""What the model sees of a gate: failing test ids, assertion lines, the first lines of a lint
error, capped in size. The whole log is saved apart, capped head and tail."""

from __future__ import annotations

import re

from stepswitch.gates.runner import LOG_CAP_CHARS, REPORT_CHARS, GateResult

_FAILED_ID = re.compile(r"^(?:FAILED|ERROR) \S")
_DETAIL = re.compile(r"^(?:E\s|>\s)")
_LOCATION = re.compile(r"^[^\s:]+\.py:\d+: \w")
_SUMMARY = re.compile(
    r"^=*\s*(?:\d+ (?:failed|passed|errors?|skipped|deselected|xfailed|xpassed)\b.*"
    r"|no tests ran.*)"
)
_PYTEST_SIGNS = re.compile(
    r"short test summary info|^=+ (?:FAILURES|ERRORS) =+$|^(?:FAILED|ERROR) \S+::", re.M
)
_NOT_FOUND = re.compile(r"([^\s:]+): command not found")
_MAX_IDS = 20
_MAX_E_RUN = 12  # consecutive E lines kept per failure
_MAX_HEAD_LINES = 25  # of a non-pytest failure


# -- reports ------------------------------------------------------------------------------------


def fit_lines(lines: list[str], limit: int) -> str:
    out: list[str] = []
    used = 0
    for line in lines:
        line = line if len(line) <= 300 else line[:297] + "..."
        if used + len(line) + 1 > limit - 20:
            out.append("[report cut]")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


def _pytest_lines(lines: list[str]) -> list[str]:
    ids = [line for line in lines if _FAILED_ID.match(line)]
    details: list[str] = []
    run = 0
    for line in lines:
        if line.startswith("E ") or line.startswith("E\t") or line == "E":
            run += 1
            if run == _MAX_E_RUN + 1:
                details.append("E   [more E lines in the log]")
            if run > _MAX_E_RUN:
                continue
        else:
            run = 0
        if _DETAIL.match(line) or _LOCATION.match(line):
            details.append(line.rstrip())
    summary = [line.strip("= ") for line in lines if _SUMMARY.match(line)]
    shown_ids = ids[:_MAX_IDS]
    if len(ids) > _MAX_IDS:
        shown_ids.append(f"... and {len(ids) - _MAX_IDS} more failing tests")
    return shown_ids + details + summary[-1:]


# What a package manager says around the script it runs (npm's and pnpm's `> name@1.0.0 test`
# and `> command` banner, yarn's `$ command`, npm's closing `npm error ...` lines): never what
# failed, so never the first lines of a report.
_MANAGER_BANNER = re.compile(r"^(?:> |\$ |yarn run v\d)")
_MANAGER_TRAILER = re.compile(r"^(?:npm error|npm ERR!|ELIFECYCLE|error Command failed|info Visit)")


def _without_manager_lines(lines: list[str]) -> list[str]:
    text = [line.rstrip() for line in lines if line.strip()]
    start = 0
    while start < len(text) and _MANAGER_BANNER.match(text[start]):
        start += 1
    kept = [line for line in text[start:] if not _MANAGER_TRAILER.match(line.lstrip(" "))]
    return kept or text


def _head_lines(lines: list[str]) -> list[str]:
    text = _without_manager_lines(lines)
    if len(text) <= _MAX_HEAD_LINES:
        return text
    rest = len(text) - _MAX_HEAD_LINES
    return [*text[:_MAX_HEAD_LINES], f"[{rest} more lines in the log]", text[-1]]


def focused_report(header: str, output: str, limit: int = REPORT_CHARS) -> str:
    """The header, then what says what failed: pytest's failing ids, `>` and `E` lines and
    summary, or the first lines of any other tool's output; at most `limit` characters."""
    lines = output.splitlines()
    body = _pytest_lines(lines) if _PYTEST_SIGNS.search(output) else _head_lines(lines)
    return fit_lines([header, *body], limit)


def gate_report(result: GateResult, limit: int = REPORT_CHARS) -> str:
    """The short report of a command's verdict, rebuilt from its log."""
    header = result.report.splitlines()[0] if result.report else result.name
    if result.passed:
        return header
    missing = _NOT_FOUND.search(result.log)
    if "; command not found: " in header and missing:
        # bash names the word it could not run; the first word of a wrapped command may not be it.
        header = header.split("; command not found: ")[0] + f"; command not found: {missing[1]}"
    if "timed out after" in header or "cannot start" in header:
        tail = [line for line in result.log.splitlines() if line.strip()][-10:]
        return fit_lines([header, *(["last output:", *tail] if tail else [])], limit)
    return focused_report(header, result.log, limit)


def cap_log(text: str, limit: int = LOG_CAP_CHARS) -> str:
    if len(text) <= limit:
        return text
    head = limit // 4
    tail = limit - head
    cut = len(text) - limit
    return f"{text[:head]}\n[... {cut} characters cut from the middle ...]\n{text[-tail:]}"
