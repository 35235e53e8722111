"""The benchmark task: a fixture repository and 40 scripted model turns, for ssw and for
mini-swe-agent. Standard library only: both benchmark processes (each in its own venv) import it.

The fixture is a small inventory package with a bug in `parse_quantity` and a failing test. The
ssw turns go through the real step machine (plan, navigate, read, run, edit, gates, a rejecting
review that sends the task back to edit, gates again, an approving review, summarize); the mini
turns are the same moves written as bash commands, one per turn, ending in mini's submit command.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

TASK = (
    "parse_quantity in invkit/parse.py only accepts bare digits: ' 1,200 ' raises and '-3' is "
    "accepted. Make it accept surrounding whitespace and thousands separators and reject "
    "negative or malformed quantities with ValueError."
)

# The Python that runs the fixture's tests: bench/perf/.venv-ssw's, ssw as a user installs it
# plus pytest (run_all.py makes it), which the run's sandbox shows read-only as ssw's own
# interpreter. Both agents run the very same command, ssw as its gate and mini as a bash action.
SSW_PYTHON = Path(__file__).resolve().parent / ".venv-ssw" / "bin" / "python"
PYTEST = f"{SSW_PYTHON} -m pytest -q -x -p no:cacheprovider"

_PARSE_V0 = '''\
"""Parsing SKUs, quantities and prices from text."""

from __future__ import annotations

import re

SKU_PATTERN = re.compile(r"^[A-Z]{3}-\\d{4}$")


def parse_sku(text: str) -> str:
    """An SKU like 'ABC-1234'; raises ValueError otherwise."""
    sku = text.strip().upper()
    if not SKU_PATTERN.match(sku):
        raise ValueError(f"not an SKU: {text!r}")
    return sku


def parse_price(text: str) -> int:
    """A price like '12.50' or '$3' as whole cents; raises ValueError otherwise."""
    cleaned = text.strip().removeprefix("$")
    units, _, cents = cleaned.partition(".")
    if not units.isdigit() or (cents and not (cents.isdigit() and len(cents) <= 2)):
        raise ValueError(f"not a price: {text!r}")
    return int(units) * 100 + int(cents.ljust(2, "0") or 0)


def parse_quantity(text: str) -> int:
    """A non-negative whole quantity like '12' or ' 1,200 '; raises ValueError otherwise."""
    return int(text)
'''

_OLD_1 = "    return int(text)\n"
_NEW_1 = '    cleaned = text.strip().replace(",", "")\n    value = int(cleaned)\n    return value\n'
_OLD_2 = "    return value\n"
_NEW_2 = (
    "    if value < 0:\n"
    '        raise ValueError(f"negative quantity: {text!r}")\n'
    "    return value\n"
)
_OLD_3 = '    cleaned = text.strip().replace(",", "")\n'
_NEW_3 = (
    "    stripped = text.strip()\n"
    '    if not re.fullmatch(r"-?\\d{1,3}(,\\d{3})*|-?\\d+", stripped):\n'
    '        raise ValueError(f"not a quantity: {text!r}")\n'
    '    cleaned = stripped.replace(",", "")\n'
)

_CORE = '''\
"""An in-memory inventory: SKUs and their quantities."""

from __future__ import annotations

from dataclasses import dataclass, field

from invkit.parse import parse_quantity, parse_sku


class StockError(ValueError):
    """Raised when a removal would take the stock below zero."""


@dataclass
class Inventory:
    """Quantities by SKU. Every change goes through add or remove."""

    stock: dict[str, int] = field(default_factory=dict)
    history: list[tuple[str, int]] = field(default_factory=list)

    def add(self, sku: str, quantity: str | int) -> int:
        """Add stock; quantity may be text like '1,200'. Returns the new level."""
        key = parse_sku(sku)
        amount = quantity if isinstance(quantity, int) else parse_quantity(quantity)
        self.stock[key] = self.stock.get(key, 0) + amount
        self.history.append((key, amount))
        return self.stock[key]

    def remove(self, sku: str, quantity: str | int) -> int:
        """Take stock out; raises StockError rather than going below zero."""
        key = parse_sku(sku)
        amount = quantity if isinstance(quantity, int) else parse_quantity(quantity)
        level = self.stock.get(key, 0)
        if amount > level:
            raise StockError(f"{key}: only {level} left, cannot remove {amount}")
        self.stock[key] = level - amount
        self.history.append((key, -amount))
        return self.stock[key]

    def level(self, sku: str) -> int:
        return self.stock.get(parse_sku(sku), 0)

    def total(self) -> int:
        return sum(self.stock.values())

    def skus(self) -> list[str]:
        return sorted(self.stock)

    def low(self, threshold: int) -> list[str]:
        """SKUs at or below the threshold, lowest first."""
        return sorted((s for s in self.stock if self.stock[s] <= threshold), key=self.stock.get)
'''

_REPORT = '''\
"""Plain-text reports of an inventory."""

from __future__ import annotations

from invkit.core import Inventory


def format_row(sku: str, quantity: int, width: int = 12) -> str:
    return f"{sku:<{width}}{quantity:>10,}"


def format_report(inventory: Inventory, title: str = "Stock") -> str:
    """A title, one row per SKU in order, and a total line."""
    lines = [title, "-" * 22]
    lines += [format_row(sku, inventory.stock[sku]) for sku in inventory.skus()]
    lines += ["-" * 22, format_row("total", inventory.total())]
    return "\\n".join(lines)


def format_low(inventory: Inventory, threshold: int) -> str:
    low = inventory.low(threshold)
    if not low:
        return f"nothing at or below {threshold}"
    return "\\n".join(format_row(sku, inventory.stock[sku]) for sku in low)
'''

_UNITS = '"""Unit conversions for packed goods."""\n\nfrom __future__ import annotations\n\n' + (
    "\n\n".join(
        f"def {name}_to_units(count: int) -> int:\n"
        f'    """{name.capitalize()} of {n} units each."""\n'
        f"    return count * {n}"
        for name, n in [
            ("pairs", 2),
            ("sixpacks", 6),
            ("dozens", 12),
            ("cases", 24),
            ("crates", 48),
            ("pallets", 960),
            ("grosses", 144),
            ("scores", 20),
        ]
    )
    + "\n"
)

_TEST_PARSE = """\
import pytest

from invkit.parse import parse_price, parse_quantity, parse_sku


def test_sku_is_normalised():
    assert parse_sku(" abc-1234 ") == "ABC-1234"


def test_bad_sku_is_rejected():
    with pytest.raises(ValueError):
        parse_sku("AB-12")


def test_prices_in_cents():
    assert parse_price("$12.5") == 1250
    assert parse_price("3") == 300


def test_plain_quantity():
    assert parse_quantity("12") == 12


def test_whitespace_and_thousands_separators():
    assert parse_quantity(" 1,200 ") == 1200


def test_negative_quantity_is_rejected():
    with pytest.raises(ValueError):
        parse_quantity("-3")
"""

_TEST_CORE = """\
import pytest

from invkit.core import Inventory, StockError


def test_add_and_remove():
    inv = Inventory()
    inv.add("ABC-0001", 5)
    inv.remove("abc-0001", 2)
    assert inv.level("ABC-0001") == 3


def test_cannot_go_below_zero():
    inv = Inventory()
    inv.add("ABC-0001", 1)
    with pytest.raises(StockError):
        inv.remove("ABC-0001", 2)


def test_low_stock_lowest_first():
    inv = Inventory()
    inv.add("ABC-0001", 9)
    inv.add("ABC-0002", 1)
    inv.add("ABC-0003", 50)
    assert inv.low(10) == ["ABC-0002", "ABC-0001"]
"""

_TEST_REPORT = """\
from invkit.core import Inventory
from invkit.report import format_low, format_report
from invkit.units import cases_to_units, dozens_to_units


def test_report_has_rows_and_total():
    inv = Inventory()
    inv.add("ABC-0002", 1500)
    inv.add("ABC-0001", 3)
    text = format_report(inv)
    assert text.splitlines()[2].startswith("ABC-0001")
    assert text.splitlines()[-1].endswith("1,503")


def test_nothing_low():
    assert format_low(Inventory(), 5) == "nothing at or below 5"


def test_units():
    assert dozens_to_units(2) == 24
    assert cases_to_units(1) == 24
"""

TEST_GROUPS = """\
import pytest

from invkit.parse import parse_quantity


@pytest.mark.parametrize("text", ["1,2,00", "12,00", ",100", "1 000", ""])
def test_malformed_groups_are_rejected(text):
    with pytest.raises(ValueError):
        parse_quantity(text)


def test_grouped_thousands():
    assert parse_quantity("12,345,678") == 12345678
"""

FILES: dict[str, str] = {
    "README.md": "# invkit\n\nA small inventory library: parse SKUs and quantities, keep "
    "stock, print reports.\n\nRun the tests with `python -m pytest`.\n",
    # ssw's gate, configured so that it is one plain command: the same test run mini is
    # scripted to do (ssw's default for a repository with tests would be a two-stage pytest).
    "pyproject.toml": '[project]\nname = "invkit"\nversion = "0.3.0"\n'
    'requires-python = ">=3.11"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n\n'
    f'[tool.stepswitch.gates.tests]\ncommand = "{PYTEST}"\n',
    "invkit/__init__.py": '"""invkit: inventory helpers."""\n\n'
    "from invkit.core import Inventory, StockError\n"
    "from invkit.parse import parse_price, parse_quantity, parse_sku\n\n"
    '__all__ = ["Inventory", "StockError", "parse_price", "parse_quantity", "parse_sku"]\n',
    "invkit/parse.py": _PARSE_V0,
    "invkit/core.py": _CORE,
    "invkit/report.py": _REPORT,
    "invkit/units.py": _UNITS,
    "tests/test_parse.py": _TEST_PARSE,
    "tests/test_core.py": _TEST_CORE,
    "tests/test_report.py": _TEST_REPORT,
}

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


def make_fixture(root: Path) -> Path:
    """Write the fixture repository into `root` (a new folder) and commit it on `main`."""
    root.mkdir(parents=True, exist_ok=False)
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "fixture"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


# The file's text after each edit, for mini's whole-file writes (ssw edits in place).
PARSE_V1 = _PARSE_V0.replace(_OLD_1, _NEW_1)
PARSE_V2 = PARSE_V1.replace(_OLD_2, _NEW_2)
PARSE_V3 = PARSE_V2.replace(_OLD_3, _NEW_3)


def _heredoc(path: str, text: str) -> str:
    return f"cat > {path} <<'BENCH_EOF'\n{text}BENCH_EOF"


# One row per model turn: (phase, a line of reasoning, ssw reply, mini's bash command).
# An ssw reply is (tool name, arguments) or ("content", text) for the JSON-verdict review turns.
# ssw's `done` turns become an `echo` of the same summary for mini, ssw's gate runs become mini's
# own test runs, the reviews become `git diff` and `git status`, and summarize becomes mini's
# submit command. Both scripts are 40 turns.
Turn = tuple[str, str, tuple[str, Any], str]

_PLAN = (
    "1. invkit/parse.py: parse_quantity is a bare int(text).\n"
    "2. Strip whitespace, drop thousands separators, reject negatives and bad grouping.\n"
    "3. tests/test_parse.py covers it; add tests for malformed groups."
)
_FILES = (
    "invkit/parse.py: defines parse_quantity\n"
    "invkit/core.py: Inventory.add/remove call parse_quantity\n"
    "tests/test_parse.py: its tests (two fail)"
)
_NOTES = (
    "parse_quantity (parse.py, last function) returns int(text): ' 1,200 ' raises, '-3' "
    "passes. core.Inventory.add/remove rely on it raising ValueError for bad text."
)
_OBSERVED = "No test run yet beyond a listing; the package has no build step."
_EDIT1 = "parse_quantity strips whitespace, drops commas and rejects negative values."
_EDIT2 = "parse_quantity now checks digit grouping with a regex; tests for malformed groups added."
_SUMMARY = (
    "Accept separators and whitespace in parse_quantity\n\n"
    "parse_quantity was a bare int(): ' 1,200 ' raised and '-3' passed. It now strips\n"
    "whitespace, checks 3-digit grouping, and rejects negative or malformed text."
)
_REJECT = (
    '{"verdict": "reject", "reasons": "Commas are dropped anywhere: \'1,2,00\' parses as 1200. '
    'Check the grouping."}'
)
_APPROVE_OTHER = '{"verdict": "approve", "reasons": "Small change; the tests cover it."}'
_APPROVE = '{"verdict": "approve", "reasons": "Grouping is checked; negatives are rejected."}'


def _echo(text: str) -> str:
    return "echo " + "'" + text.replace("'", "'\\''") + "'"


TURNS: list[Turn] = [
    ("plan", "Look at the top of the repository.", ("list_dir", {}), "ls -la"),
    ("plan", "And the package.", ("list_dir", {"path": "invkit"}), "ls -la invkit"),
    (
        "plan",
        "Which tests exist?",
        ("find_files", {"pattern": "test_*.py"}),
        "find . -name 'test_*.py' -not -path './.git/*'",
    ),
    ("plan", "Enough for a plan.", ("done", {"summary": _PLAN}), _echo(_PLAN)),
    (
        "navigate",
        "List the Python files.",
        ("find_files", {"pattern": "*.py"}),
        "find . -name '*.py' -not -path './.git/*' | sort",
    ),
    (
        "navigate",
        "Where is parse_quantity defined?",
        ("search", {"pattern": "def parse_quantity"}),
        "grep -rn 'def parse_quantity' --include='*.py' .",
    ),
    (
        "navigate",
        "Which tests use it?",
        ("search", {"pattern": "parse_quantity", "path": "tests"}),
        "grep -rn parse_quantity tests",
    ),
    (
        "navigate",
        "Which code calls it?",
        ("search", {"pattern": "parse_quantity", "path": "invkit", "glob": "*.py"}),
        "grep -rn parse_quantity invkit --include='*.py'",
    ),
    ("navigate", "The tests folder.", ("list_dir", {"path": "tests"}), "ls -la tests"),
    ("navigate", "Those are the files.", ("done", {"summary": _FILES}), _echo(_FILES)),
    ("read", "Read the parser.", ("read", {"path": "invkit/parse.py"}), "nl -ba invkit/parse.py"),
    (
        "read",
        "Read its tests.",
        ("read", {"path": "tests/test_parse.py"}),
        "nl -ba tests/test_parse.py",
    ),
    (
        "read",
        "How are errors raised?",
        ("search", {"pattern": "ValueError", "path": "invkit"}),
        "grep -rn ValueError invkit",
    ),
    (
        "read",
        "The callers in core.",
        ("read", {"path": "invkit/core.py", "start_line": 1, "end_line": 40}),
        "nl -ba invkit/core.py | sed -n '1,40p'",
    ),
    ("read", "And the report.", ("read", {"path": "invkit/report.py"}), "nl -ba invkit/report.py"),
    ("read", "I have what the editor needs.", ("done", {"summary": _NOTES}), _echo(_NOTES)),
    ("run", "A cheap command first.", ("run", {"command": "true"}), "true"),
    ("run", "List the worktree.", ("run", {"command": "ls -la"}), "ls -la"),
    ("run", "The project file.", ("read", {"path": "pyproject.toml"}), "cat pyproject.toml"),
    ("run", "Report what I saw.", ("done", {"summary": _OBSERVED}), _echo(_OBSERVED)),
    (
        "edit",
        "Read the parser again.",
        ("read", {"path": "invkit/parse.py"}),
        "nl -ba invkit/parse.py",
    ),
    (
        "edit",
        "Find the int call.",
        ("search", {"pattern": r"int\(", "path": "invkit/parse.py"}),
        "grep -n 'int(' invkit/parse.py",
    ),
    (
        "edit",
        "Strip and drop separators.",
        ("edit", {"path": "invkit/parse.py", "old": _OLD_1, "new": _NEW_1}),
        _heredoc("invkit/parse.py", PARSE_V1),
    ),
    ("edit", "Check the edit.", ("read", {"path": "invkit/parse.py"}), "nl -ba invkit/parse.py"),
    (
        "edit",
        "Reject negatives.",
        ("edit", {"path": "invkit/parse.py", "old": _OLD_2, "new": _NEW_2}),
        _heredoc("invkit/parse.py", PARSE_V2),
    ),
    (
        "edit",
        "Re-read the tests.",
        ("read", {"path": "tests/test_parse.py"}),
        "nl -ba tests/test_parse.py",
    ),
    (
        "edit",
        "Any other callers to adjust?",
        ("search", {"pattern": "parse_quantity", "path": "tests"}),
        "grep -rn parse_quantity tests",
    ),
    ("edit", "Done with the first change.", ("done", {"summary": _EDIT1}), PYTEST),
    ("review", "Review the change.", ("content", _REJECT), "git diff"),
    ("review", "Second opinion.", ("content", _APPROVE_OTHER), "git status --short"),
    (
        "edit",
        "Address the review.",
        ("read", {"path": "invkit/parse.py"}),
        "nl -ba invkit/parse.py",
    ),
    (
        "edit",
        "Check the digit grouping.",
        ("edit", {"path": "invkit/parse.py", "old": _OLD_3, "new": _NEW_3}),
        _heredoc("invkit/parse.py", PARSE_V3),
    ),
    ("edit", "Check it.", ("read", {"path": "invkit/parse.py"}), "nl -ba invkit/parse.py"),
    (
        "edit",
        "Add tests for malformed groups.",
        ("write_file", {"path": "tests/test_parse_groups.py", "content": TEST_GROUPS}),
        _heredoc("tests/test_parse_groups.py", TEST_GROUPS),
    ),
    (
        "edit",
        "Check the new tests.",
        ("read", {"path": "tests/test_parse_groups.py"}),
        "nl -ba tests/test_parse_groups.py",
    ),
    (
        "edit",
        "re is imported already?",
        ("search", {"pattern": "^import re", "path": "invkit/parse.py"}),
        "grep -n '^import re' invkit/parse.py",
    ),
    ("edit", "Done with the fix.", ("done", {"summary": _EDIT2}), PYTEST),
    ("review", "Review again.", ("content", _APPROVE), "git diff"),
    ("review", "Second opinion.", ("content", _APPROVE_OTHER), "git diff --stat"),
    (
        "summarize",
        "Write the commit message.",
        ("done", {"summary": _SUMMARY}),
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
    ),
]

# Which worker the demo-style policy routes each phase to (for the ssw script's expect_model).
_MODEL = {
    "plan": "scripted-large",
    "navigate": "scripted-small",
    "read": "scripted-small",
    "run": "scripted-mid",
    "edit": "scripted-mid",
    "summarize": "scripted-small",
}


def ssw_script() -> dict[str, Any]:
    """The ssw script (JSON is YAML, so load_script reads it)."""
    replies: list[dict[str, Any]] = []
    review_models = iter(["scripted-large", "scripted-other"] * 2)
    for phase, thought, (name, args), _ in TURNS:
        if name == "content":
            replies.append({"expect_model": next(review_models), "content": args})
        else:
            replies.append(
                {
                    "expect_model": _MODEL[phase],
                    "content": thought,
                    "tool_calls": [{"name": name, "arguments": args}],
                }
            )
    return {"replies": replies}


POLICY = """\
# The benchmark's policy: the demo's ladder on the scripted provider, with room for 40 steps.
[workers.small]
provider = "scripted"
model = "scripted-small"
max_output_tokens = 2048
timeout = 30

[workers.mid]
provider = "scripted"
model = "scripted-mid"
max_output_tokens = 4096
timeout = 30

[workers.large]
provider = "scripted"
model = "scripted-large"
max_output_tokens = 8192
timeout = 30

[workers.other]
provider = "scripted"
model = "scripted-other"
max_output_tokens = 4096
timeout = 30

[[rules]]
when = { step_type = ["navigate", "read", "summarize"] }
worker = "small"

[[rules]]
when = { step_type = ["plan", "review"] }
worker = "large"

[[rules]]
when = { step_type = ["edit", "run", "triage"] }
worker = "mid"

[escalation]
after_gate_failures = 2
ladder = ["mid", "large"]

[limits]
max_steps = 60
steps_per_rung = 60
wall_time_s = 600

[review]
reviewer = "large"
second_opinion = "other"
"""


def ssw_run_commands() -> list[str]:
    """The commands ssw's `run` tool executes in this script, in order."""
    return [args["command"] for _, _, (name, args), _ in TURNS if name == "run"]


def mini_commands() -> list[str]:
    return [command for *_, command in TURNS]


if __name__ == "__main__":  # print the turn table, for reading
    for i, (phase, thought, (name, _), command) in enumerate(TURNS, 1):
        first = command.splitlines()[0]
        print(f"{i:>2} {phase:<9} {name:<10} {thought:<34} {first[:60]}", file=sys.stdout)
