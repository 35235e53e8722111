"""The gates of Node and TypeScript packages, through `ssw gates` as a user runs it: detected from
package.json, the suite gate's impacted stage first (node's own `--test` on the test files whose
imports reach the change; `vitest related`), the failing test named from the runner's report, a
suite that already fails judged by the failing tests a change adds, and no Python wording.

node's own runner needs only node; Vitest and TypeScript come from npm (`.ci/run` installs them
in $SSW_NODE_TOOLS: without it those tests skip)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from stepswitch.agent.repo_gates import RepoGates
from stepswitch.gates.config import GateConfig
from stepswitch.gates.detect import load_gates
from stepswitch.gates.suite import GateSuite
from tests.harness.cli import run_ssw_cli, ssw_env
from tests.harness.repo import with_node_modules, write_repo

needs_node = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are not on PATH",
)

# A node --test package: three modules, a test file for each (CommonJS and an ES module).
NODE_PACKAGE = {
    "package.json": '{"name": "calc", "private": true, "scripts": {"test": "node --test test/"}}',
    "src/add.js": "exports.add = (a, b) => a + b;\n",
    "src/mul.mjs": "export const mul = (a, b) => a * b;\n",
    "src/double.js": "const { add } = require('./add');\nexports.double = (a) => add(a, a);\n",
    "test/add.test.js": """
        const test = require('node:test');
        const assert = require('node:assert');
        const { add } = require('../src/add.js');
        test('adds', () => { assert.strictEqual(add(1, 2), 3); });
        test('adds zero', () => { assert.strictEqual(add(1, 0), 1); });
        """,
    "test/mul.test.mjs": """
        import { describe, it } from 'node:test';
        import assert from 'node:assert';
        import { mul } from '../src/mul.mjs';
        describe('mul', () => {
          it('multiplies', () => { assert.equal(mul(2, 3), 6); });
          it('by zero', () => { assert.equal(mul(2, 0), 0); });
        });
        """,
    "test/double.test.js": """
        const test = require('node:test');
        const assert = require('node:assert');
        const { double } = require('../src/double');
        test('doubles', () => { assert.strictEqual(double(4), 8); });
        """,
}

# A TypeScript package tested by Vitest.
TS_PACKAGE = {
    "package.json": """
        {"name": "shapes", "private": true, "type": "module",
         "scripts": {"test": "vitest run"},
         "devDependencies": {"typescript": "5.9.3", "vitest": "2.1.9"}}
        """,
    "tsconfig.json": """
        {"compilerOptions": {"strict": true, "module": "ESNext", "moduleResolution": "Bundler",
         "target": "ES2022", "lib": ["ES2022"], "types": [], "noEmit": true,
         "skipLibCheck": true}, "include": ["src", "test"]}
        """,
    ".gitignore": "node_modules\n",
    "src/add.ts": "export function add(a: number, b: number): number { return a + b; }\n",
    "src/mul.ts": "export function mul(a: number, b: number): number { return a * b; }\n",
    "test/add.test.ts": """
        import { describe, expect, it } from 'vitest';
        import { add } from '../src/add';
        describe('add', () => {
          it('adds', () => { expect(add(1, 2)).toBe(3); });
          it('adds zero', () => { expect(add(1, 0)).toBe(1); });
        });
        """,
    "test/mul.test.ts": """
        import { expect, it } from 'vitest';
        import { mul } from '../src/mul';
        it('multiplies', () => { expect(mul(2, 3)).toBe(6); });
        """,
}


def _gates(root: Path, *changed: str) -> tuple[int, str]:
    args: list[str | Path] = ["gates", root]
    for path in changed:
        args += ["--changed", path]
    done = run_ssw_cli(args, env=ssw_env(), timeout=240)
    return done.returncode, done.stdout + done.stderr


def _changed_package(tmp_path: Path, path: str, text: str) -> tuple[int, str]:
    """`ssw gates` on the node --test package after `path` became `text`."""
    root = write_repo(tmp_path / "calc", NODE_PACKAGE, commit=True)
    (root / path).write_text(text + "\n")
    return _gates(root, path)


def _line(output: str, start: str) -> str:
    return next(line for line in output.splitlines() if line.strip().startswith(start))


@needs_node
def test_a_broken_module_fails_its_impacted_tests_naming_the_test(tmp_path: Path) -> None:
    code, output = _changed_package(
        tmp_path, "src/mul.mjs", "export const mul = (a, b) => a * b + 1;"
    )
    assert code == 1, output
    # Only the test file whose imports reach the change ran: fewer tests than the five.
    assert "ran 2 tests: 1 test file of 3 import a changed file" in _line(output, "FAIL  tests:imp")
    assert "FAILED test/mul.test.mjs > mul > multiplies (test/mul.test.mjs)" in output
    assert "7 == 6" in output
    assert "tests:full" not in output.split("verdict:")[0]


@needs_node
def test_impacted_first_follows_requires_then_the_full_suite_decides(tmp_path: Path) -> None:
    # The same sums another way: add.js is reached by two test files, one through double.js.
    new = "exports.add = (a, b) => [a, b].reduce((x, y) => x + y);"
    code, output = _changed_package(tmp_path, "src/add.js", new)
    assert code == 0, output
    assert "tests: package.json scripts.test runs node --test, through npm" in output
    # No Python wording on a repository without Python gates (the first line names the folder).
    assert "Python" not in output.split("\n", 1)[1] and "pytest" not in output.split("\n", 1)[1]
    assert "ran 3 tests: 2 test files of 3 import a changed file" in _line(
        output, "pass  tests:impacted"
    )
    assert "ran 5 tests: the full suite" in _line(output, "pass  tests:full")


@needs_node
def test_a_suite_failing_before_any_edit_is_judged_by_the_tests_a_change_adds(
    tmp_path: Path,
) -> None:
    # Configured in .stepswitch.toml, node run directly: no npm start for each of its five runs.
    suite = '[gates.tests]\nkind = "suite"\nrunner = "node-test"\ncommand = "node --test test/"\n'
    files = {
        **NODE_PACKAGE,
        "src/add.js": "exports.add = (a, b) => a + b + (b === 0 ? 1 : 0);\n",
        ".stepswitch.toml": suite,
    }
    root = write_repo(tmp_path / "calc", files, commit=True)
    gates = RepoGates(load_gates(root), root, ssw_env(), "HEAD")
    try:
        gates.preflight()
        start = gates.description.splitlines()
        # A change that leaves that failure alone passes...
        (root / "src/mul.mjs").write_text("export const mul = (a, b) => b * a;\n")
        kept = gates.run(["src/mul.mjs"])
        # ...one that breaks another test fails, naming only that one.
        (root / "src/double.js").write_text("exports.double = (a) => a * 3;\n")
        broken = gates.run(["src/double.js"])
    finally:
        gates.close()
    # The run's start: the failing start, and no Python wording for a suite gate's repository.
    assert (
        "  gates: tests already fails before any edit (1 failing test(s)), so the change is "
        "judged by the failing tests it adds"
    ) in start
    assert not [line for line in start if "Python" in line or "import" in line]
    assert kept.passed, kept.report
    assert not broken.passed
    assert "the change adds 1 failing test(s) the untouched start did not have" in broken.report
    assert "FAILED test/double.test.js > doubles" in broken.report
    assert "adds zero" not in broken.report


@needs_node
def test_a_typescript_package_gets_tsc_and_vitest_related_first(tmp_path: Path) -> None:
    """Untouched, both gates pass; a broken module fails the tests `vitest related` picks, named
    from Vitest's report (tsc's own findings: tests/gates/test_findings.py)."""
    root = write_repo(tmp_path / "shapes", TS_PACKAGE)
    with_node_modules(root)
    write_repo(root, {}, commit=True)
    code, output = _gates(root)
    assert code == 0, output
    assert "types: typescript is a dependency and tsconfig.json exists: tsc --noEmit" in output
    assert "ran 3 tests: the full suite" in _line(output, "pass  tests:full")
    (root / "src/mul.ts").write_text(
        "export function mul(a: number, b: number): number { return a * b + 1; }\n"
    )
    # The tests gate alone from here (tsc ran above): the suite as `ssw gates` runs it.
    config = load_gates(root)
    tests = GateConfig(tuple(g for g in config.gates if g.name == "tests"), "detected")
    suite = GateSuite(tests, root, ssw_env())
    try:
        broken = suite.run(["src/mul.ts"])
    finally:
        suite.close()
    (stage,) = broken.test_stages
    assert (stage.name, stage.passed, stage.tests, stage.why) == (
        "tests:impacted",
        False,
        1,
        "vitest related src/mul.ts",
    )
    assert broken.report.splitlines()[1:3] == [
        "FAILED test/mul.test.ts > multiplies (test/mul.test.ts)",
        "    AssertionError: expected 7 to be 6 // Object.is equality",
    ]
