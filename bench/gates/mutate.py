"""Seed single-module mutations of the target project and keep those that break a test.

Candidates are AST-guided, one-line text edits inside function bodies, on lines the project's
own test suite executes (measured once with coverage): flip a comparison, swap and/or, swap +/-,
change an int constant (n -> n + 1), flip a bool constant, return None instead of a value,
negate an if/while condition, drop a `not`. With BENCH_LEVEL=module the same edits are made on
lines that run at import instead (module-level statements and comprehensions, class bodies,
decorators and default values of the functions defined at import: the kind ADR 0076 leaves to
the import graph), into mutations-<project>-module.json; each mutation says its "level".
The order of the candidates is a seeded shuffle;
the first pass tries each module in turn so that every module with covered code gets one, the
second takes candidates in the shuffled order. Each candidate is verified under the whole suite
(`pytest -x`, the benchmark's flags): it is kept when a test fails or a test module no longer
imports, rejected when the suite passes, breaks pytest itself (packaging is one of pytest's own
dependencies) or times out. Writes mutations.json (mutations-<project>.json for BENCH_PROJECT).
Before the coverage run and each verification it waits while /tmp/ssw-quiet exists.

Run with any Python 3.11+: `python bench/gates/mutate.py`.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import common

SEED = 20260601
WANTED = 50  # mutations to keep (--wanted)
MAX_TRIES = 110  # candidates to try at most
FIRST_PASS_TRIES = 3  # per module, in the pass that gives each module a mutation
# A generated data table (SPDX license ids): thousands of bool constants, no logic.
EXCLUDED = frozenset(common.EXCLUDED_MODULES)

_COMPARE = {
    ast.Lt: ("<", "<="),
    ast.LtE: ("<=", "<"),
    ast.Gt: (">", ">="),
    ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="),
    ast.NotEq: ("!=", "=="),
    ast.Is: ("is", "is not"),
    ast.IsNot: ("is not", "is"),
    ast.In: ("in", "not in"),
    ast.NotIn: ("not in", "in"),
}
_BOOL = {ast.And: ("and", "or"), ast.Or: ("or", "and")}
_ARITH = {ast.Add: ("+", "-"), ast.Sub: ("-", "+")}
_AUG = {ast.Add: ("+=", "-="), ast.Sub: ("-=", "+=")}


@dataclass(frozen=True)
class Site:
    module: str
    line: int  # 1-based line of the edit
    stmt_line: int  # first line of the enclosing statement (what coverage reports)
    start: int  # byte offsets of the replaced span in the line
    end: int
    kind: str
    replacement: str

    def key(self) -> tuple[str, int, int, str]:
        return (self.module, self.line, self.start, self.kind)


class _Finder:
    def __init__(self, module: str, source: bytes) -> None:
        self.module = module
        self.lines = source.splitlines()
        self.sites: dict[tuple[str, int, int, str], Site] = {}

    def segment(self, node: ast.expr) -> bytes | None:
        if node.lineno != node.end_lineno or node.end_col_offset is None:
            return None
        return self.lines[node.lineno - 1][node.col_offset : node.end_col_offset]

    def add(self, line: int, stmt: int, start: int, end: int, kind: str, text: str) -> None:
        site = Site(self.module, line, stmt, start, end, kind, text)
        self.sites.setdefault(site.key(), site)

    def gap(self, left: ast.expr, right: ast.expr, op: tuple[str, str], kind: str, stmt: int):
        """The operator between two operands on one line, as written."""
        if left.end_lineno != right.lineno or left.end_col_offset is None:
            return
        raw = self.lines[right.lineno - 1][left.end_col_offset : right.col_offset]
        core = raw.strip(b" \t()")
        if b" ".join(core.split()).decode("utf-8", "replace") != op[0]:
            return
        start = left.end_col_offset + raw.index(core)
        self.add(right.lineno, stmt, start, start + len(core), kind, op[1])

    def visit(self, node: ast.AST, stmt: int) -> None:
        if isinstance(node, ast.stmt):
            stmt = node.lineno
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            return
        if isinstance(node, ast.JoinedStr):
            return  # messages
        if isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.visit(node.value, stmt)
            return
        self.sites_of(node, stmt)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue  # visited as functions of their own
            self.visit(child, stmt)

    def sites_of(self, node: ast.AST, stmt: int) -> None:
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                left = node.left if i == 0 else node.comparators[i - 1]
                self.gap(left, node.comparators[i], _COMPARE[type(op)], "compare", stmt)
        elif isinstance(node, ast.BoolOp):
            for left, right in zip(node.values, node.values[1:], strict=False):
                self.gap(left, right, _BOOL[type(node.op)], "and_or", stmt)
        elif isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            self.gap(node.left, node.right, _ARITH[type(node.op)], "arith", stmt)
        elif isinstance(node, ast.AugAssign) and type(node.op) in _AUG:
            self.gap(node.target, node.value, _AUG[type(node.op)], "arith", stmt)
        elif isinstance(node, ast.Constant) and self.segment(node) is not None:
            if isinstance(node.value, bool):
                flipped = "False" if node.value else "True"
                self.add(
                    node.lineno, stmt, node.col_offset, node.end_col_offset or 0, "bool", flipped
                )
            elif isinstance(node.value, int):
                text = str(node.value + 1)
                self.add(node.lineno, stmt, node.col_offset, node.end_col_offset or 0, "int", text)
        elif isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            is_none = isinstance(value, ast.Constant) and value.value is None
            if not is_none and self.segment(value) is not None:
                end = value.end_col_offset or 0
                self.add(value.lineno, stmt, value.col_offset, end, "return_none", "None")
        elif isinstance(node, ast.If | ast.While):
            test = node.test
            seg = self.segment(test)
            if seg is not None and not (isinstance(test, ast.UnaryOp) and type(test.op) is ast.Not):
                text = f"not ({seg.decode('utf-8')})"
                self.add(
                    test.lineno, stmt, test.col_offset, test.end_col_offset or 0, "negate", text
                )
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            seg = self.segment(node.operand)
            if seg is not None and self.segment(node) is not None:
                text = f"({seg.decode('utf-8')})"
                self.add(
                    node.lineno, stmt, node.col_offset, node.end_col_offset or 0, "drop_not", text
                )


def find_sites(module: str, source: bytes) -> list[Site]:
    tree = ast.parse(source)
    finder = _Finder(module, source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]  # the docstring
            for stmt in body:
                if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    finder.visit(stmt, stmt.lineno)
    return sorted(finder.sites.values(), key=Site.key)


def find_module_sites(module: str, source: bytes) -> list[Site]:
    """The same edits on lines that run at import: module-level statements, class bodies, and
    the decorators and default values of the functions defined at import, not their bodies."""
    finder = _Finder(module, source)

    def walk(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                first = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)])
                header: list[ast.expr] = list(stmt.decorator_list)
                if isinstance(stmt, ast.ClassDef):
                    header += [*stmt.bases, *(k.value for k in stmt.keywords)]
                else:
                    header += [*stmt.args.defaults, *(d for d in stmt.args.kw_defaults if d)]
                for node in header:
                    finder.visit(node, first)
                if isinstance(stmt, ast.ClassDef):
                    walk(stmt.body)
            else:
                finder.visit(stmt, stmt.lineno)  # skips the functions and classes inside it

    walk(ast.parse(source).body)
    return sorted(finder.sites.values(), key=Site.key)


def render(site: Site, source: bytes) -> tuple[str, str] | None:
    """(line before, line after), or None when the edit does not make a different program."""
    lines = source.splitlines(keepends=True)
    line = lines[site.line - 1]
    new_line = line[: site.start] + site.replacement.encode("utf-8") + line[site.end :]
    mutated = b"".join([*lines[: site.line - 1], new_line, *lines[site.line :]])
    try:
        if ast.dump(ast.parse(mutated)) == ast.dump(ast.parse(source)):
            return None
    except SyntaxError:
        return None
    return line.decode("utf-8").rstrip("\r\n"), new_line.decode("utf-8").rstrip("\r\n")


def covered_lines() -> dict[str, set[int]]:
    """Lines the suite executes, per module (relative path), measured once with coverage."""
    suffix = "" if common.PROJECT_NAME == "packaging" else f"-{common.PROJECT_NAME}"
    out = common.WORK / f"coverage{suffix}.json"
    stamp = common.WORK / f"coverage{suffix}.stamp"
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=common.PROJECT, capture_output=True, text=True, check=True
    ).stdout.strip()
    if not (out.exists() and stamp.exists() and stamp.read_text() == head):
        common.wait_quiet("the coverage run")
        print("coverage: running the suite once under coverage...", flush=True)
        data_file = str(common.WORK / f".coverage{suffix}")
        # The benchmark's own (empty) coverage configuration: a project's may name plugins its
        # test environment does not install (pyflakes' setup.cfg: covdefaults).
        rcfile = common.WORK / "coveragerc-bench"
        rcfile.write_text("[run]\n", encoding="utf-8")
        run = [str(common.VENV_PYTHON), "-m", "coverage", "run", f"--rcfile={rcfile}"]
        run.append(f"--data-file={data_file}")
        env = common.pytest_env()
        pytest = ["-m", "pytest", *common.PYTEST_FLAGS]
        proc = subprocess.run(
            [*run, f"--source={common.PACKAGE_DIR}", *pytest],
            cwd=common.PROJECT,
            env=env,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise SystemExit(f"the suite fails under coverage:\n{proc.stdout[-3000:]}")
        report = [str(common.VENV_PYTHON), "-m", "coverage", "json", f"--rcfile={rcfile}"]
        report.append(f"--data-file={data_file}")
        subprocess.run([*report, "-o", str(out)], cwd=common.PROJECT, env=env, check=True)
        stamp.write_text(head)
    data = json.loads(out.read_text())
    lines: dict[str, set[int]] = {}
    for name, info in data["files"].items():
        path = Path(name)
        rel = path.relative_to(common.PROJECT) if path.is_absolute() else path
        lines[rel.as_posix()] = set(info["executed_lines"])
    return lines


def candidates() -> list[Site]:
    covered = covered_lines()
    sites: list[Site] = []
    for path in sorted((common.PROJECT / common.PACKAGE_DIR).rglob("*.py")):
        module = path.relative_to(common.PROJECT).as_posix()
        parts = set(Path(module).parts[:-1])
        if module in EXCLUDED or parts & {"test", "tests"} or Path(module).name == "conftest.py":
            continue  # the code under test, not the tests inside the package
        hit = covered.get(module, set())
        find = find_module_sites if common.LEVEL == "module" else find_sites
        sites += [s for s in find(module, path.read_bytes()) if s.stmt_line in hit]
    rng = random.Random(SEED)
    rng.shuffle(sites)
    return sites


def verify(mutation: dict[str, object]) -> common.Run:
    common.wait_quiet(f"{mutation['module']}:{mutation['line']}")
    original = common.apply_mutation(mutation)
    try:
        return common.run_pytest([])
    finally:
        common.revert(mutation, original)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wanted", type=int, default=WANTED)
    parser.add_argument("--max-tries", type=int, default=MAX_TRIES)
    args = parser.parse_args()
    common.require_setup()
    pool = candidates()
    counts: dict[str, int] = {}
    for site in pool:
        counts[site.module] = counts.get(site.module, 0) + 1
    print(f"{len(pool)} candidate sites on covered lines in {len(counts)} modules", flush=True)

    kept: list[dict[str, object]] = []
    rejected: list[dict[str, object]] = []
    tried: set[tuple[str, int, int, str]] = set()
    used_lines: set[tuple[str, int]] = set()
    began = time.perf_counter()

    def attempt(site: Site) -> bool:
        tried.add(site.key())
        if (site.module, site.line) in used_lines:
            return False
        source = (common.PROJECT / site.module).read_bytes()
        shown = render(site, source)
        if shown is None:
            return False
        used_lines.add((site.module, site.line))
        mutation: dict[str, object] = {
            "module": site.module,
            "line": site.line,
            "kind": site.kind,
            "level": common.LEVEL,
            "before": shown[0],
            "after": shown[1],
        }
        run = verify(mutation)
        mutation["verify"] = {
            "rc": run.rc,
            "seconds": round(run.seconds, 2),
            "first_failure": run.first_failure,
        }
        n = len(kept) + len(rejected) + 1
        if run.failed:
            mutation["id"] = f"m{len(kept) + 1:02d}"
            kept.append(mutation)
            verdict = f"kept {mutation['id']}"
        else:
            why = {0: "suite passes", -1: "timeout"}.get(
                run.rc, f"pytest itself fails (rc {run.rc})"
            )
            mutation["rejected_because"] = why
            rejected.append(mutation)
            verdict = f"rejected: {why}"
        print(
            f"[{n:3d}] {site.module}:{site.line} {site.kind}: {verdict} ({run.seconds:.1f} s)",
            flush=True,
        )
        return run.failed

    by_module: dict[str, list[Site]] = {}
    for site in pool:
        by_module.setdefault(site.module, []).append(site)
    for module in sorted(by_module):
        for site in by_module[module][:FIRST_PASS_TRIES]:
            if len(kept) + len(rejected) >= args.max_tries or attempt(site):
                break
    for site in pool:
        if len(kept) >= args.wanted or len(kept) + len(rejected) >= args.max_tries:
            break
        if site.key() not in tried:
            attempt(site)

    result = {
        "project": common.PROJECT_NAME,
        "version": common.PROJECT_VERSION,
        "seed": SEED,
        "level": common.LEVEL,
        "generated": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "method": "see the docstring of bench/gates/mutate.py",
        "candidate_sites": len(pool),
        "sites_per_module": dict(sorted(counts.items())),
        "tried": len(kept) + len(rejected),
        "verify_seconds": round(time.perf_counter() - began, 1),
        "mutations": kept,
        "rejected": rejected,
    }
    text = common.portable(json.dumps(result, indent=1))  # no machine path: ADR 0026
    common.MUTATIONS_JSON.write_text(text + "\n", encoding="utf-8")
    print(f"kept {len(kept)} of {len(kept) + len(rejected)} tried -> {common.MUTATIONS_JSON}")
    if len(kept) < args.wanted:
        print(f"only {len(kept)} < {args.wanted} mutations kept", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
