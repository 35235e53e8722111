"""The impacted stages never cost more than they save (ADR 0076): a change to code that runs at
import is caught by the import graph's stage, not left to the full suite, and no impacted stage
runs every test that the full suite then runs again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stepswitch.gates.config import GateConfig, TestsGate
from stepswitch.gates.suite import GateSuite
from stepswitch.gates.tools import pytest_command
from tests.harness.repo import edit, git, write_repo

pytestmark = pytest.mark.slow  # real pytest runs

# shop.tables is imported on first use, inside rate(): the first test to call it (test_vat, in
# the first file) runs every module-level line of tables.py, so the trace charges them to it.
SHOP = {
    "shop/__init__.py": "",
    "shop/tables.py": """
        RATES = {name: percent / 100 for name, percent in [("vat", 20), ("reduced", 5)]}

        class Limits:
            basket = 3
    """,
    "shop/prices.py": """
        import functools

        @functools.lru_cache(maxsize=8)
        def rate(name):
            from shop import tables

            return tables.RATES[name]

        def basket_limit():
            from shop import tables

            return tables.Limits.basket
    """,
    "shop/greeting.py": """
        def hello():
            return "hi"
    """,
    "tests/test_a_prices.py": """
        from shop.prices import rate

        def test_vat():
            assert rate("vat") == 0.2
    """,
    # Checks what import set up, without being the first to run it.
    "tests/test_b_setup.py": """
        from shop.prices import basket_limit, rate

        def test_reduced():
            assert rate("reduced") == 0.05

        def test_limit():
            assert basket_limit() == 3

        def test_cache_size():
            assert rate.cache_info().maxsize == 8
    """,
    "tests/test_c_greeting.py": """
        from shop.greeting import hello

        def test_hello():
            assert hello() == "hi"
    """,
}


def _suite(root: Path, state: Path) -> GateSuite:
    gate = TestsGate(name="tests", kind="tests", command=pytest_command(root))
    return GateSuite(GateConfig((gate,), "test"), root, dict(os.environ), state_dir=state)


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GateSuite]:
    folder = tmp_path_factory.mktemp("shop")
    root = write_repo(folder / "repo", SHOP, commit=True)
    suite = _suite(root, folder / "state")
    line = suite.record_call_map(git(root, "rev-parse", "HEAD").strip())
    assert line.startswith("gates: call map: 5 tests traced at "), line
    return root, suite


# Held out: none of these is the kind of one-line mutation inside a function body that the
# call map was built and measured on (bench/gates' mutations).
MODULE_LEVEL = [
    ("shop/tables.py", '("reduced", 5)', '("reduced", 50)', "test_reduced"),  # a comprehension
    ("shop/tables.py", "basket = 3", "basket = 30", "test_limit"),  # a class attribute
    ("shop/prices.py", "maxsize=8", "maxsize=16", "test_cache_size"),  # a decorator argument
]


@pytest.mark.parametrize(
    ("rel", "old", "new", "failing"), MODULE_LEVEL, ids=["comprehension", "class", "decorator"]
)
def test_a_change_to_code_that_runs_at_import_is_caught_by_the_impacted_stage(
    traced: tuple[Path, GateSuite], rel: str, old: str, new: str, failing: str
) -> None:
    root, suite = traced
    edit(root, rel, old, new)
    try:
        result = suite.run([rel])
    finally:
        edit(root, rel, new, old)
    # The tests the trace charged the line to go first and pass; the graph's stage (the files
    # that import the module, not test_c_greeting.py) finds the failure; no full suite.
    *covered, impacted = result.test_stages
    assert [s.name for s in covered] in (["tests:covered"], ["tests:covered", "tests:covered-rest"])
    assert all(s.passed for s in covered)
    assert (impacted.name, impacted.files) == ("tests:impacted", 3)  # two tests, and the module
    assert impacted.first_failure == f"tests/test_b_setup.py::{failing}"
    assert not result.full_ran


def _held_trace(root: Path, fifo: Path) -> None:
    """A conftest.py that holds the background trace (it runs in a copy of the commit's files,
    not in `root`) until the fifo is opened for writing, which the test never does."""
    (root / "conftest.py").write_text(
        "from pathlib import Path\n\n\n"
        "def pytest_configure(config):\n"
        f"    if Path(__file__).resolve().parent != Path({str(root.resolve())!r}):\n"
        f"        open({str(fifo)!r}).close()\n",
        encoding="utf-8",
    )


def test_while_the_call_map_is_traced_no_test_runs_twice(tmp_path: Path) -> None:
    # Every test file imports shop.prices: the import graph selects them all, so an impacted
    # stage would be the full suite before the full suite.
    files = {k: v for k, v in SHOP.items() if "greeting" not in k}
    root = write_repo(tmp_path / "repo", files)
    fifo = tmp_path / "hold"
    os.mkfifo(fifo)
    _held_trace(root, fifo)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    suite = _suite(root, tmp_path / "state")
    try:
        line = suite.record_call_map(git(root, "rev-parse", "HEAD").strip(), background=True)
        assert "in the background" in line
        edit(root, "shop/prices.py", "return tables.Limits.basket", "return +tables.Limits.basket")
        result = suite.run(["shop/prices.py"])
        assert suite._tracing is not None and suite._tracing.line is None  # still tracing
    finally:
        suite.close()
    assert result.passed
    assert [(s.name, s.ran) for s in result.test_stages] == [("tests:full", 4)]
    assert any("tests:impacted skipped" in note for note in result.warm_notes)
