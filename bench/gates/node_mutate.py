"""Seed and verify the Node package's mutations (node/mutations.json): one-line text edits of
its JavaScript, like mutate.py's of Python, on lines its suite runs inside a function body.

Candidates, on a line's code with its string literals and `//` comment blanked out: flip a
comparison (`===`/`!==`, `<`/`>=`, `>`/`<=`), swap `&&`/`||`, swap a spaced `+`/`-`, `n` ->
`n+1`, flip `true`/`false`, `return x` -> `return undefined`, negate an `if`/`while` condition,
drop a `!`, drop an expression statement (-> `void 0`). Which lines: one run of the suite under
node's own V8 coverage (NODE_V8_COVERAGE, child processes included): a line is a site when its
first character lies inside a function (not the module's top level) and the innermost block
around it ran. A seeded shuffle orders the candidates; a first pass gives each module one, then
the shuffled order fills up to --wanted. Each is verified: `node --check` on the module (a syntax
error is rejected), then the whole suite (the gate's command): kept if it fails, rejected if it
passes or times out.

Run with the stepswitch venv after node_project.py:
`.venv/bin/python bench/gates/node_mutate.py --wanted 24 --max-tries 40`.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import common
import node_project
from node_project import NodeTarget


@dataclass(frozen=True)
class Candidate:
    module: str
    line: int
    kind: str
    before: str
    after: str

    def mutation(self, ident: str) -> dict[str, object]:
        return {"id": ident, **asdict(self)}


_STRING = re.compile(r"""'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`""")
_COMMENT = re.compile(r"//.*$")
_SWAPS: tuple[tuple[str, re.Pattern[str], dict[str, str]], ...] = (
    ("compare", re.compile(r"===|!=="), {"===": "!==", "!==": "==="}),
    (
        "compare",
        re.compile(r" (?:>=|<=|>|<) "),
        {" >= ": " < ", " <= ": " > ", " > ": " <= ", " < ": " >= "},
    ),
    ("and_or", re.compile(r"&&|\|\|"), {"&&": "||", "||": "&&"}),
    ("arith", re.compile(r" [+-] "), {" + ": " - ", " - ": " + "}),
    ("bool", re.compile(r"\b(?:true|false)\b"), {"true": "false", "false": "true"}),
)
_INT = re.compile(r"(?<![\w.$])\d+(?![\w.])")
_NOT = re.compile(r"!(?=[\w$(])")
_RETURN = re.compile(r"^(\s*)return (.+?);?$")
_CONDITION = re.compile(r"^(\s*(?:\} else )?(?:if|while) )\((.+)\)( \{)$")
_STATEMENT = re.compile(r"^(\s*)[\w$.\[\]]+(?:\s*(?:[-+*/|&]|\?\?)?=\s*.+|\(.*\))$")
_OPEN_ENDS = ("{", "(", "[", ",", "=>", "=", "+", "-", "&&", "||", "?", ":", ".")
_RUNS_ON = tuple(end for end in _OPEN_ENDS if end != "{")  # a line the next one continues
_CONTINUES = (".", "?", ":", "+", "-", "&&", "||")  # a line that continues the one before


def masked(text: str) -> str:
    """`text` with its string literals' contents and a trailing `//` comment blanked out (same
    length), so that no edit lands inside them."""
    text = _STRING.sub(lambda m: m[0][0] + " " * (len(m[0]) - 2) + m[0][-1], text)
    return _COMMENT.sub(lambda m: " " * len(m[0]), text)


def balanced(code: str) -> bool:
    depth = 0
    for char in code:
        depth += char in "([{"
        depth -= char in ")]}"
        if depth < 0:
            return False
    return depth == 0


def line_candidates(
    module: str, number: int, text: str, previous: str = "", following: str = ""
) -> Iterator[Candidate]:
    """The one-line mutations of line `number` of `module`, whose text (no line ending) is
    `text`, between the lines `previous` and `following` (a statement is whole only when the
    line before does not run on into it and the line after does not chain onto it)."""
    code = masked(text)
    stripped = code.strip()
    if not stripped or stripped.startswith(("*", "/*", "//")):
        return
    whole = not (
        stripped.startswith(_CONTINUES)
        or masked(previous).strip().endswith(_RUNS_ON)
        or masked(following).strip().startswith((*_CONTINUES, "(", "["))
    )

    def at(start: int, end: int, new: str, kind: str) -> Candidate:
        return Candidate(module, number, kind, text, text[:start] + new + text[end:])

    for kind, pattern, table in _SWAPS:
        for found in pattern.finditer(code):
            yield at(found.start(), found.end(), table[found[0]], kind)
    for found in _INT.finditer(code):
        yield at(found.start(), found.end(), str(int(found[0]) + 1), "int")
    for found in _NOT.finditer(code):
        yield at(found.start(), found.end(), "", "drop_not")
    ends_open = not whole or stripped.rstrip(";").endswith(_OPEN_ENDS)
    returned = _RETURN.match(code.rstrip())
    if returned and not ends_open and balanced(returned[2]) and returned[2].strip() != "undefined":
        yield Candidate(module, number, "return_none", text, f"{returned[1]}return undefined")
    condition = _CONDITION.match(code.rstrip())
    if condition and balanced(condition[2]):
        head, tail = condition.end(1), condition.start(3)
        yield at(head, tail, f"(!({text[head + 1 : tail - 1]}))", "negate")
    statement = _STATEMENT.match(code.rstrip())
    if statement and not ends_open and balanced(stripped):
        yield Candidate(module, number, "drop", text, f"{statement[1]}void 0")


# -- which lines the suite runs, inside a function ------------------------------------------


def covered_function_lines(
    root: Path, coverage_dir: Path, modules: list[str]
) -> dict[str, set[int]]:
    """Per module, the lines (1-based) whose first character lies inside a function and whose
    innermost block ran in some process, from node's V8 coverage files in `coverage_dir`."""
    wanted = {(root / m).resolve().as_uri(): m for m in modules}
    lines: dict[str, set[int]] = {m: set() for m in modules}
    for path in sorted(coverage_dir.glob("*.json")):
        for script in json.loads(path.read_text(encoding="utf-8")).get("result", []):
            module = wanted.get(script.get("url", ""))
            if module is not None:
                lines[module] |= _ran_in_function(root / module, script["functions"])
    return lines


def _ran_in_function(path: Path, functions: list[dict[str, object]]) -> set[int]:
    text = path.read_text(encoding="utf-8")
    ranges = [
        (int(r["startOffset"]), int(r["endOffset"]), int(r["count"]))  # type: ignore[index]
        for f in functions
        for r in f["ranges"]  # type: ignore[attr-defined]
    ]
    bodies = [
        (int(f["ranges"][0]["startOffset"]), int(f["ranges"][0]["endOffset"]))  # type: ignore[index]
        for f in functions
        if f["ranges"] and int(f["ranges"][0]["startOffset"]) > 0  # type: ignore[index]
    ]
    found: set[int] = set()
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        first = offset + len(line) - len(line.lstrip())
        offset += len(line)
        if not any(start < first < end for start, end in bodies):
            continue
        around = [r for r in ranges if r[0] <= first < r[1]]
        if around and min(around, key=lambda r: r[1] - r[0])[2] > 0:
            found.add(number)
    return found


# The suite takes under a minute on two shared cores: a mutation that makes a test wait
# forever (a CLI test reading from its child) is a timeout well before bench.py's limit.
SUITE_TIMEOUT_S = 75.0


def suite_run(target: NodeTarget, env: dict[str, str]) -> tuple[int, float]:
    """The gate's full command, plain: its exit code (-1: a timeout) and wall time."""
    rc, seconds, _ = common.run_group(
        ["bash", "-c", target.tests], target.root, env, SUITE_TIMEOUT_S
    )
    return rc, seconds


def candidates(target: NodeTarget) -> list[Candidate]:
    modules = target.modules()
    with tempfile.TemporaryDirectory(prefix="ssw-bench-cov-") as folder:
        env = node_project.gate_env() | {"NODE_V8_COVERAGE": folder}
        rc, seconds = suite_run(target, env)
        if rc != 0:
            raise SystemExit(f"the suite fails on the clean tree (exit {rc})")
        print(f"coverage run: {seconds:.1f} s", flush=True)
        sites = covered_function_lines(target.root, Path(folder), modules)
    found: list[Candidate] = []
    for module in modules:
        text = ["", *(target.root / module).read_text(encoding="utf-8").splitlines(), ""]
        for number in sorted(sites[module]):
            line, before, after = text[number], text[number - 1], text[number + 1]
            found += line_candidates(module, number, line, before, after)
    return found


def ordered(found: list[Candidate], seed: int) -> list[Candidate]:
    """A seeded shuffle, then one per module first (in the shuffled order), then the rest."""
    shuffled = list(found)
    random.Random(seed).shuffle(shuffled)
    first: dict[str, Candidate] = {}
    for candidate in shuffled:
        first.setdefault(candidate.module, candidate)
    chosen = set(map(id, first.values()))
    return [*first.values(), *(c for c in shuffled if id(c) not in chosen)]


def verify(target: NodeTarget, candidate: Candidate, env: dict[str, str]) -> dict[str, object]:
    mutation = candidate.mutation("?")
    original = common.apply_mutation(mutation, target.root)
    try:
        check = subprocess.run(
            ["node", "--check", candidate.module], cwd=target.root, capture_output=True
        )
        if check.returncode != 0:
            return {"kept": False, "why": "syntax error"}
        rc, seconds = suite_run(target, env)
    finally:
        common.revert(mutation, original, target.root)
    why = {-1: "timeout", 0: "the suite passes"}.get(rc, f"the suite fails (exit {rc})")
    return {"kept": rc > 0, "why": why, "suite_rc": rc, "suite_s": round(seconds, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--wanted", type=int, default=24)
    parser.add_argument("--max-tries", type=int, default=40, help="in all, resumed ones too")
    parser.add_argument(
        "--resume", action="store_true", help="go on from node/mutations.json's tries"
    )
    args = parser.parse_args()
    target = NodeTarget.load()
    node_project.require_setup(target)
    seed = int(str(common.load_json(node_project.PROJECT_JSON)["seed"]))
    found = candidates(target)
    modules = sorted({c.module for c in found})
    print(f"{len(found)} candidate sites in {len(modules)} modules", flush=True)
    env = node_project.gate_env()
    data: dict[str, object] = {
        "project": target.name,
        "version": target.version,
        "integrity": target.integrity,
        "seed": seed,
        "candidate_sites": len(found),
        "modules_with_sites": len(modules),
        "tried": 0,
        "mutations": [],
        "rejected": [],
    }
    if args.resume:
        before = common.load_json(node_project.MUTATIONS_JSON)
        if any(before.get(k) != data[k] for k in ("project", "version", "seed", "candidate_sites")):
            raise SystemExit("node/mutations.json was seeded from other candidates: no resume")
        data |= {k: before[k] for k in ("tried", "mutations", "rejected")}
    kept, rejected = data["mutations"], data["rejected"]
    assert isinstance(kept, list) and isinstance(rejected, list)
    for tried, candidate in enumerate(ordered(found, seed), start=1):
        if tried <= int(str(data["tried"])):
            continue  # tried before this run (--resume)
        if len(kept) >= args.wanted or tried > args.max_tries:
            break
        common.wait_quiet(f"try {tried}")
        verdict = verify(target, candidate, env)
        ident = f"m{len(kept) + 1:02d}" if verdict["kept"] else f"r{len(rejected) + 1:02d}"
        entry = candidate.mutation(ident) | {"verification": verdict}
        (kept if verdict["kept"] else rejected).append(entry)
        data |= {"tried": tried, "date": datetime.now(UTC).strftime("%Y-%m-%d")}
        text = json.dumps(data, indent=1) + "\n"  # after each try: a run cut short keeps them
        node_project.MUTATIONS_JSON.write_text(text, encoding="utf-8")
        print(
            f"{ident} {candidate.module}:{candidate.line} {candidate.kind}: {verdict['why']}",
            flush=True,
        )
    print(f"{len(kept)} kept, {len(rejected)} rejected -> {node_project.MUTATIONS_JSON.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
