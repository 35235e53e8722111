"""A foreign Harbor task's tests/test.sh read without running it (ADR 0037, ADR 0071): its one
pytest run, the packages it installs, and that the reward it writes is that run's exit status.

The script is read as statements (logical lines cut at each unquoted `;`). The pytest run may
carry reporting options and redirections of its output (`--ctrf=FILE`, `-rA`, `2>&1`, `> FILE`,
and `| tee FILE` once `set -o pipefail` made the pipe's status pytest's); anything that changes
which tests run is refused. Its reward must be written by one of the shapes

    pytest ...                        pytest ...                 if pytest ...; then
    if [ $? -eq 0 ]; then             status=$?                    echo 1 > REWARD
      echo 1 > REWARD                 if [ $status -eq 0 ]; then else
    else                                echo 1 > REWARD             echo 0 > REWARD
      echo 0 > REWARD                 else ... fi                  fi
    fi

with no other statement naming the reward: a reward written whatever pytest says would import a
task whose grade means something else than ssw's.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

from stepswitch.bench.harbor_shell import Refused, logical_lines, requirement, split_words

WHERE = "tests/test.sh"
REWARD = "/logs/verifier/reward.txt"
_PYTEST_FLAGS = re.compile(
    r"^(-rA|-r\w+|-v+|-q+|-s|-x|-l|--tb=\w+|--color=\w+|-p|no:cacheprovider|--no-header"
    r"|--showlocals|--durations=\d+|--capture=\w+|--disable-warnings|--verbose|--quiet)$"
)
_REPORTS = ("--ctrf", "--junitxml", "--junit-xml")  # a report file: the outcome is the same
_REDIRECT = re.compile(r"^(?:[012&])?>>?(?:&[12]|[^&>\s]\S*)$")  # 2>&1, >FILE, 2>>FILE, &>FILE
_REDIRECT_TO = re.compile(r"^(?:[012&])?>>?$")  # > FILE
_STATUS = re.compile(r"(\w+)=\$\?")
_ECHO = re.compile(rf"echo ['\"]?([01])['\"]? ?> ?{re.escape(REWARD)}")


def statements(text: str) -> list[str]:
    """The script's logical lines cut at each `;` outside quotes, a trailing `# comment` left out,
    `then` and `else` parted from the command they start, whitespace collapsed."""
    found = []
    for line in logical_lines(text):
        parts, quote, start, i, end = [], "", 0, 0, len(line)
        while i < end:
            char = line[i]
            if char == "\\" and quote != "'":
                i += 1  # the next character is taken as it is
            elif quote:
                quote = "" if char == quote else quote
            elif char in "'\"":
                quote = char
            elif char == ";":
                parts.append(line[start:i])
                start = i + 1
            elif char == "#" and line[i - 1] in " \t":
                end = i  # a comment, to the end of the line
            i += 1
        parts.append(line[start:end])
        for part in (" ".join(p.split()) for p in parts):
            keyword, _, rest = part.partition(" ")
            found += [keyword, rest] if keyword in ("then", "else") and rest else [part]
    return [s for s in found if s]


def pytest_run(test_sh: Path) -> tuple[list[str], list[str]]:
    """The test paths (relative to tests/) of test.sh's one pytest run, and the packages it adds."""
    text = test_sh.read_text("utf-8")
    if "reward.json" in text or "reward.txt" not in text:
        raise Refused(f"{WHERE} does not write its reward as reward.txt")
    found = statements(text)
    runs, plugins = [], []
    for at, line in enumerate(found):
        words = split_words(line, WHERE) if "<<" not in line else line.split()
        installer = words[: words.index("install")] if "install" in words else []
        if any(w in ("pip", "pip3", "uv") for w in installer):  # the tests' own packages
            specs = [w for w in words[len(installer) + 1 :] if not w.startswith("-")]
            plugins += [r for spec in specs if (r := requirement(spec, WHERE)) is not None]
        elif "pytest" in words:
            runs.append((at, words))
        elif words and words[0] in ("python", "python3"):
            raise Refused(f"{WHERE} runs Python beside pytest ({line[:60]!r}): a scored reward")
    if len(runs) != 1:
        raise Refused(
            f"{WHERE} runs pytest {len(runs)} times: only one run, its exit status the "
            "reward, is read"
        )
    at, words = runs[0]
    before = words[: words.index("pytest")]
    if turned := [w for w in before if w in ("!", "||", "|", "&")]:
        raise Refused(
            f"{WHERE}: {turned[0]!r} before pytest: its exit status would not be the reward"
        )
    for flag, value in itertools.pairwise(before):
        if flag in ("-w", "--with"):
            plugins += [r for r in [requirement(value, WHERE)] if r is not None]
    pipefail = any(s.startswith("set ") and "pipefail" in s.split() for s in found[:at])
    paths = _test_paths(words[words.index("pytest") + 1 :], pipefail)
    _reward_is_exit_status(found, at)
    return paths, plugins


def _test_paths(args: list[str], pipefail: bool) -> list[str]:
    """The /tests paths among pytest's arguments; a reporting option or a redirection of its
    output is read past, anything else refused."""
    paths = []
    while args:
        arg = args.pop(0)
        if arg.startswith("/tests/"):
            paths.append(arg.removeprefix("/tests/"))
        elif arg in _REPORTS or _REDIRECT_TO.match(arg):
            if not args:
                raise Refused(f"{WHERE}: pytest's {arg} names no file")
            args.pop(0)
        elif arg.partition("=")[0] in _REPORTS or _REDIRECT.match(arg):
            continue
        elif arg == "|":
            tee = [a for a in args if a != "-a"]
            if not pipefail or len(tee) != 2 or tee[0] != "tee":
                raise Refused(
                    f"{WHERE} pipes pytest into {' '.join(args)!r}: its exit status would be "
                    "the reward (only `| tee FILE` after `set -o pipefail` is read)"
                )
            break
        elif not _PYTEST_FLAGS.match(arg):
            raise Refused(f"{WHERE}: pytest argument {arg!r} is not read")
    return paths


def _reward_is_exit_status(found: list[str], at: int) -> None:
    """Refused unless reward.txt is written 1 when the pytest run at `found[at]` exits 0 and 0
    otherwise, by one of the shapes the module names, and nowhere else."""

    def refuse(why: str) -> Refused:
        return Refused(f"{WHERE}: its reward is not pytest's exit status: {why}")

    if any("reward" in s for s in found[:at]):
        raise refuse("reward.txt is written before pytest runs")
    rest = found[at + 1 :]
    if not found[at].startswith("if "):
        status = _STATUS.fullmatch(rest[0]) if rest else None
        name = status[1] if status else "?"
        rest = rest[1:] if status else rest
        test = rf"if \[\[? \"?\$\{{?{re.escape(name)}\}}?\"? (-eq|==?) \"?0\"? \]\]?"
        if not rest or not re.fullmatch(test, rest[0]):
            shown = rest[0] if rest else "nothing"
            raise refuse(f"after pytest comes {shown!r}, not a test of its exit status")
        rest = rest[1:]
    block, after = rest[:5], rest[5:]
    read = [_echo(s) if n in (1, 3) else s for n, s in enumerate(block)]
    if read != ["then", "1", "else", "0", "fi"]:
        raise refuse(f"it does not write 1 to {REWARD} when pytest exits 0 and 0 otherwise")
    if any("reward" in s for s in after):
        raise refuse("reward.txt is written again after pytest's result")


def _echo(statement: str) -> str:
    """What `echo N > REWARD` writes; "" for any other statement."""
    written = _ECHO.fullmatch(statement)
    return written[1] if written else ""
