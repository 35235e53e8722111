"""What the Node gates read without running anything: the gates package.json declares (each with
its reason, a tool missing from node_modules a note), the test files a change's imports reach
(or why none can be chosen soundly), and the failing tests in Jest's and Mocha's reports."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from stepswitch.gates.config import CommandGate, SuiteGate
from stepswitch.gates.detect import detect_gates
from stepswitch.gates.lang.node import JEST, MOCHA, NODE_TEST, VITEST
from stepswitch.gates.lang.node_project import with_args
from stepswitch.gates.lang.node_truth import node_config_check
from stepswitch.gates.suite import GateSuite
from stepswitch.util.git_checkouts import checkout_tree
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import write_repo

needs_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not on PATH")


def _package(**fields: object) -> str:
    return json.dumps({"name": "p", "private": True, **fields})


@needs_npm
def test_package_json_scripts_are_the_gates_each_with_its_reason(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            "package.json": _package(
                scripts={
                    "format:check": "prettier --check .",
                    "lint": "eslint .",
                    "typecheck": "tsc --noEmit",
                    "test": "jest --ci",
                },
                devDependencies={"jest": "29.7.0"},
            ),
            "package-lock.json": "{}",
            "node_modules/.bin/jest": "",
        },
    )
    config = detect_gates(tmp_path)
    assert [(g.name, g.command) for g in config.gates] == [
        ("format", "npm run format:check"),
        ("lint", "npm run lint"),
        ("types", "npm run typecheck"),
        ("tests", "npm test"),
    ]
    tests = config.gates[-1]
    assert isinstance(tests, SuiteGate) and tests.runner == "jest"
    assert dict(config.reasons)["tests"] == (
        "package.json scripts.test runs jest, through npm (package-lock.json)"
    )
    assert config.languages == ("Node",)
    assert not config.speaks_python


def test_a_runner_declared_but_not_installed_is_a_note_not_a_gate(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            "package.json": _package(
                scripts={"test": "vitest run"}, devDependencies={"vitest": "2.1.9"}
            ),
            "pnpm-lock.yaml": "",
        },
    )
    if shutil.which("pnpm") is None:  # without pnpm the note says that instead
        assert "pnpm (pnpm-lock.yaml), which is not on PATH" in detect_gates(tmp_path).notes[0]
        return
    config = detect_gates(tmp_path)
    assert config.gates == ()
    assert "package.json declares vitest, but node_modules/.bin has no vitest" in config.notes[0]
    assert "run `pnpm install`" in config.notes[0]


@needs_npm
def test_ssw_gates_says_why_a_package_has_no_gates(tmp_path: Path) -> None:
    package = _package(scripts={"test": "vitest run"}, devDependencies={"vitest": "2.1.9"})
    write_repo(tmp_path, {"package.json": package}, commit=True)
    done = run_ssw_cli(["gates", tmp_path])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"gates for {tmp_path} (detected): none, nothing to check",
        "gates: no tests gate: package.json declares vitest, but node_modules/.bin has no vitest "
        "(run `npm install` in the repository, or configure the gates in .stepswitch.toml)",
    ]


@needs_npm
def test_the_placeholder_test_script_is_no_gate_and_an_unknown_runner_a_command_gate(
    tmp_path: Path,
) -> None:
    placeholder = 'echo "Error: no test specified" && exit 1'
    write_repo(tmp_path / "a", {"package.json": _package(scripts={"test": placeholder})})
    assert detect_gates(tmp_path / "a").gates == ()
    write_repo(tmp_path / "b", {"package.json": _package(scripts={"test": "ava"})})
    (gate,) = detect_gates(tmp_path / "b").gates
    assert isinstance(gate, CommandGate) and gate.command == "npm test"


@needs_npm
def test_typescript_beside_a_tsconfig_is_a_types_gate_for_the_files_tsc_reads(
    tmp_path: Path,
) -> None:
    write_repo(
        tmp_path,
        {
            "package.json": _package(devDependencies={"typescript": "5.9.3"}),
            "tsconfig.json": "{}",
            "node_modules/.bin/tsc": "",
        },
    )
    config = detect_gates(tmp_path)
    (types,) = config.gates
    assert isinstance(types, CommandGate) and types.command == "node_modules/.bin/tsc --noEmit"
    assert types.applies_to(["src/a.ts"]) and not types.applies_to(["README.md"])
    assert config.languages == ("TypeScript",)


@needs_npm
def test_a_runs_worktree_uses_the_checkouts_node_modules(tmp_path: Path) -> None:
    """git leaves node_modules out of a run's worktree (<checkout>/.ssw/worktrees/<id>): the
    checkout's own is the one node and npm find from there, and the one detection asks."""
    package = _package(scripts={"test": "vitest run"}, devDependencies={"vitest": "2.1.9"})
    files = {"package.json": package, "tsconfig.json": "{}"}
    write_repo(tmp_path, {**files, "node_modules/.bin/vitest": "", "node_modules/.bin/tsc": ""})
    worktree = write_repo(tmp_path / ".ssw/worktrees/r1", files)
    (tests,) = detect_gates(worktree).gates
    assert isinstance(tests, SuiteGate) and tests.runner == "vitest"
    assert VITEST.impacted(worktree, "npm test", ["a.ts"], tmp_path / "r").why == (
        "no changed JavaScript or TypeScript file: the full suite only"
    )
    (worktree / "a.ts").write_text("")
    related = VITEST.impacted(worktree, "npm test", ["a.ts"], tmp_path / "r").command
    assert related is not None and f"{tmp_path}/node_modules/.bin/vitest related" in related


@needs_npm
def test_what_the_node_gates_run_is_the_base_commits(tmp_path: Path) -> None:
    package = {"scripts": {"test": "node --test", "build": "tsc"}, "devDependencies": {}}
    root = write_repo(tmp_path, {"package.json": _package(**package)}, commit=True)
    config = detect_gates(root)
    suite = GateSuite(config, root, dict(os.environ))
    # Its dependencies and the scripts no gate runs are the change's to make...
    package = {"scripts": {"test": "node --test", "build": "esbuild"}, "dependencies": {"a": "1"}}
    (root / "package.json").write_text(_package(**package))
    kept = node_config_check(suite.context, config, "HEAD")
    assert kept is not None and kept.passed
    # ...the test script, npm's pretest and the runner's configuration are not.
    package["scripts"] = {"test": "exit 0", "pretest": "rm -rf test"}
    (root / "package.json").write_text(_package(**package))
    (root / "vitest.config.ts").write_text("export default {};\n")
    result = node_config_check(suite.context, config, "HEAD")
    assert result is not None and not result.passed
    assert result.report.splitlines()[1:4] == [
        "package.json: scripts.pretest: changed since the base commit",
        "package.json: scripts.test: changed since the base commit",
        "vitest.config.ts: added or removed",
    ]


@needs_npm
def test_node_modules_a_run_leaves_out_of_its_commit_fail_the_gates(tmp_path: Path) -> None:
    """node finds a worktree's node_modules before the checkout's: ignored, it is code the
    commit does not show (the runners' caches there are no modules)."""
    files = {"package.json": _package(scripts={"test": "node --test"}), ".gitignore": "node_mo*\n"}
    root = write_repo(tmp_path, files, commit=True)
    write_repo(root, {"node_modules/.vite/results.json": "{}", "src/node_modules/a/i.js": ""})
    config = detect_gates(root)
    suite = GateSuite(config, root, dict(os.environ), tree=checkout_tree(root))
    result = node_config_check(suite.context, config, "HEAD")
    assert result is not None and not result.passed
    assert result.report.splitlines()[1] == (
        "src/node_modules/a/i.js: in node_modules, and the commit leaves it out"
    )
    (root / "src/node_modules/a/i.js").unlink()
    kept = node_config_check(suite.context, config, "HEAD")
    assert kept is not None and kept.passed


def test_the_reporter_goes_where_npm_passes_it_on() -> None:
    assert with_args("npm test", "--json") == "npm test -- --json"
    assert with_args("npm run unit", "--json") == "npm run unit -- --json"
    assert with_args("pnpm test", "--json") == "pnpm test --json"
    assert with_args("npm run build && jest", "--json") == "npm run build && jest"


def _selection_of(root: Path, changed: str) -> tuple[str | None, tuple[str, ...], str]:
    found = NODE_TEST.impacted(root, "npm test", [changed], root / "report")
    return found.command, found.tests, found.why


def test_the_import_graph_follows_esm_and_commonjs_through_the_package(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            "package.json": _package(scripts={"test": "node --test --test-timeout 5000 test/"}),
            "lib/index.js": "module.exports = require('./core');\n",
            "lib/core.js": "const path = require('node:path');\nmodule.exports = 1;\n",
            "lib/other.mjs": "export { x } from './leaf.mjs';\n",
            "lib/leaf.mjs": "import 'lodash';\nexport const x = 1;\n",
            "test/a.test.js": "const core = require('../lib');\n",
            "test/b.test.mjs": "import { x } from '../lib/other.mjs';\n",
        },
    )
    command, tests, why = _selection_of(tmp_path, "lib/core.js")
    assert tests == ("test/a.test.js",)
    assert why == "1 test file of 2 import a changed file"
    assert command is not None and command.endswith(
        "node --test --test-timeout 5000 test/a.test.js"
    )
    assert _selection_of(tmp_path, "lib/leaf.mjs")[1] == ("test/b.test.mjs",)
    (tmp_path / "test/b.test.mjs").write_text("import '../lib/index.js';\n")
    assert _selection_of(tmp_path, "lib/core.js")[::2] == (
        None,
        "every test file imports a changed file: the full suite only",
    )


def test_what_the_graph_cannot_follow_runs_the_full_suite_alone_saying_why(
    tmp_path: Path,
) -> None:
    write_repo(
        tmp_path,
        {
            "package.json": _package(scripts={"test": "node --test"}),
            "src/a.js": "module.exports = 1;\n",
            "test/a.test.js": "const name = './a';\nrequire('../src/' + name);\n",
        },
    )
    command, _, why = _selection_of(tmp_path, "src/a.js")
    assert command is None
    assert why == (
        "test/a.test.js imports a computed name (require('../src/' + name)): the full suite only"
    )
    (tmp_path / "test/a.test.js").write_text("require('../src/gone');\n")
    assert "imports '../src/gone', which names no file" in _selection_of(tmp_path, "src/a.js")[2]
    write_repo(tmp_path, {"package.json": _package(scripts={"test": "tsx --test"})})
    assert _selection_of(tmp_path, "src/a.js")[2] == (
        "the test script `tsx --test` is more than `node --test` and its files: the full suite only"
    )


def test_jest_and_mocha_reports_name_the_failing_tests(tmp_path: Path) -> None:
    jest = tmp_path / "jest.json"
    jest.write_text(
        json.dumps(
            {
                "numTotalTests": 3,
                "testResults": [
                    {
                        "name": "/repo/test/a.test.js",
                        "status": "failed",
                        "assertionResults": [
                            {
                                "ancestorTitles": ["sums"],
                                "title": "adds",
                                "status": "failed",
                                "failureMessages": ["Error: expect(3).toBe(4)\n    at x (a:1)"],
                            },
                            {"ancestorTitles": [], "title": "ok", "status": "passed"},
                        ],
                    },
                    {"name": "/repo/test/b.test.js", "status": "failed", "message": "SyntaxError"},
                ],
            }
        )
    )
    failed = JEST.failures("", jest)
    assert [(f.test_id, f.message) for f in failed] == [
        ("/repo/test/a.test.js > sums > adds", "Error: expect(3).toBe(4)"),
        ("/repo/test/b.test.js", "SyntaxError"),
    ]
    assert JEST.tests_run(jest) == 3
    mocha = tmp_path / "mocha.json"
    mocha.write_text(
        json.dumps(
            {
                "stats": {"tests": 2},
                "failures": [
                    {"fullTitle": "sums adds", "file": "/repo/test/a.js", "err": {"message": "no"}}
                ],
            }
        )
    )
    assert [(f.test_id, f.file) for f in MOCHA.failures("", mocha)] == [
        ("/repo/test/a.js > sums adds", "/repo/test/a.js")
    ]
    assert MOCHA.tests_run(mocha) == 2
