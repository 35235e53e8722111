"""Every Markdown file shipped is linted, and each way around the lint that issue 44 found is
closed (ADR 0077): a tamper test through the real CLI on one small repository, every route on a
line of its own, each named by file and line, and the untampered repository as the control."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.claims.conftest import CLAIMS, CLAIMS_HEAD, README, commit_all, git, lint_findings, ssw

SOURCE = "src/limits.py"
# readme.allow, tied to the constant that holds its value.
ALLOWED = CLAIMS.replace(
    CLAIMS_HEAD,
    CLAIMS_HEAD.replace(
        "claims:\n",
        "  allow:\n"
        "    - pattern: 'stops after 600 s'\n"
        "      why: the call map's time limit\n"
        "      value: 600\n"
        f"      source: {SOURCE}:TIMEOUT_S\n"
        "claims:\n",
    ),
)
FILES = {
    SOURCE: "TIMEOUT_S = 10 * 60.0\n",
    "README.md": README + "\nThe call map stops after 600 s.\n",
    "bench/perf/README.md": "# perf\n\nRun `bench/perf/run_all.py --reps N`.\n",
    "docs/decisions/0001-first.md": "# 0001\n\nMarkers read `<!-- claim ID -->`.\n",
    "docs/runs/r1/run.json": '{\n  "id": "r1",\n  "outcome": "done"\n}\n',
    "docs/runs/README.md": "# Runs\n\nOne scripted run.\n",
    # A task's instruction and a fixture repository's README are data: never linted.
    "bench/suites/s/t1/task.toml": "",
    "bench/suites/s/t1/instruction.md": "Make it 10x faster.\n",
    "tests/fixtures/repos/r/pyproject.toml": "",
    "tests/fixtures/repos/r/README.md": "It holds 3 modules.\n",
}


def _repo(make_repo: Callable[..., Path]) -> Path:
    root = make_repo(claims=ALLOWED, prove=False)
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    commit_all(root, "docs, a bench README, a record and a recorded run")
    code, out = ssw(root, "prove")
    assert code == 0, out
    assert "written: claims/docs-runs.json" in out
    commit_all(root, "proved")
    return root


def _append(root: Path, rel: str, text: str) -> int:
    """`text` (one line) appended to `rel`; its line number."""
    path = root / rel
    before = path.read_text()
    path.write_text(before + text + "\n")
    return before.count("\n") + 1


def _problems(root: Path) -> tuple[int, list[str]]:
    code, out = ssw(root, "prove", "--check")
    return code, [line for line in out.splitlines() if line.startswith("problem:")]


def test_every_route_around_the_lint_fails_naming_file_and_line(
    make_repo: Callable[..., Path],
) -> None:
    root = _repo(make_repo)
    assert _problems(root) == (0, [])  # the control: as proved, everything passes
    head = git(root, "rev-parse", "HEAD")
    day = git(root, "show", "-s", "--format=%cI", head)[:10]
    readme = {
        "span": _append(root, "README.md", "A step takes `30.6 s` here."),
        "x10": _append(root, "README.md", "Caching makes it x10 cheaper."),
        "count": _append(root, "README.md", "It passed 404 of 500 tasks."),
        "percent": _append(root, "README.md", "It saves sixty to ninety percent."),
        "dozens": _append(root, "README.md", "We ran it dozens of times."),
        "comment": _append(root, "README.md", "```\nssw demo   # about 90 s\n```") + 1,
    }
    bench = _append(root, "bench/perf/README.md", "Overhead is 5.9 ms per step.")
    record = "docs/decisions/0001-first.md"
    outside = _append(root, record, "It was 3x faster then.")
    note = "<!-- measured {} at {} -->{}<!-- /measured -->"
    kept = _append(root, record, note.format(day, head[:12], "Markers."))  # history, kept
    later = _append(root, record, note.format(day, head[:12], "7 ms."))  # typed after the commit
    forged = _append(root, record, note.format(day, "0" * 12, "Then."))  # no such commit
    (root / SOURCE).write_text("TIMEOUT_S = 300.0\n")  # the code moved; the allowed text did not
    run = root / "docs/runs/r1/run.json"
    run.write_text(run.read_text().replace('"done"', '"failed"'))
    (root / "docs/runs/r2").mkdir()
    (root / "docs/runs/r2/run.json").write_text("{}\n")  # a run the record does not name
    code, problems = _problems(root)
    assert code == 1
    expected = {
        **{f"README.md:{line}:": route for route, line in readme.items()},
        f"bench/perf/README.md:{bench}:": "'5.9'",
        f"{record}:{outside}:": "'3'",
        f"{record}:{later}:": "did not hold at commit",
        f"{record}:{forged}:": "not in the history",
        "docs/runs/r1/run.json:3:": "differs from what claims/docs-runs.json names",
        "docs/runs/r2/run.json:1:": "claims/docs-runs.json does not name it",
        "claims/claims.yaml readme.allow[0]": "is not what src/limits.py:TIMEOUT_S holds (300)",
    }
    for where, what in expected.items():
        found = [p for p in problems if p.startswith(f"problem: {where}")]
        assert found, (where, problems)
        if what.startswith("'") or " " in what:
            assert any(what in p for p in found), (where, what, found)
    assert not [p for p in problems if f"{record}:{kept}:" in p]
    assert not [p for p in problems if "bench/suites" in p or "tests/fixtures" in p]
    shown = {p.split(": ")[2].split(" ")[0] for p in problems if p.startswith("problem: README.md")}
    assert shown == {"'30.6'", "'10'", "'404'", "'500'", "'sixty", "'dozens", "'90'"}
    record_file = json.loads((root / "claims/docs-runs.json").read_text())
    assert "docs/runs/r1/run.json" in record_file["files"]


def test_code_is_exempt_only_where_it_is_code() -> None:
    from stepswitch.claims.lint import code_block, code_span

    for code in ("ssw bench run --workers 2", "bench/perf/results.json", "sha256", "x = 3"):
        assert code_span(code), code
    for code in ("\\x1b", "::1", "[95%: Lx, Hx]", "sys.path[0]", "--max-file-mb 10"):
        assert code_span(code), code
    assert code_span("20261201-090428-98debe")  # a run's id: a name
    for quantity in ("30.6 s", "x10", "3.1x", "404 of 500", "40%", "0.30", "5.9 ms/step", "$2.00"):
        assert not code_span(quantity), quantity
    assert code_block("toml", "timeout_s = 300\n")
    assert code_block("", "$ NAME=1 .venv/bin/python bench/perf/run_all.py --reps 5\n")
    assert code_block("", "ssw run . \\\n  --task T\npython - <<'EOF'\nprint(3)\nEOF\n")
    assert not code_block("", "ratio 0.41, overhead 5.9 ms\n")  # output: prose
    assert not code_block("", "ssw prove --check\nC-005  rejected  ratio 0.41\n")  # and below one


def test_every_number_word_and_a_vague_plural_is_a_finding() -> None:
    text = (
        "It saves sixty-five percent, or sixty to ninety percent, in eighty seconds over\n"
        "hundreds of runs; it reads twelve files, priced per million tokens. Labels: the fix\n"
        "5a3b8b1 on 1aa72df (2022), in 2025, after commit 4701576.\n"
    )
    found = lint_findings(text)
    words = ["sixty-five percent", "sixty to ninety percent", "eighty seconds", "hundreds of"]
    assert found == words


def test_an_allow_entry_blesses_its_value_and_nothing_beside_it() -> None:
    import re

    from stepswitch.claims.lint import lint_text
    from stepswitch.claims.model import AllowRule, Claims, ReadmeSpec

    rule = AllowRule(pattern=r"after \d+ s[^.]*", why="a limit", value=600, source="x.py:T")
    claims = Claims(Path("."), ReadmeSpec(allow=[rule]), (re.compile(rule.pattern),), ())
    assert lint_text("It stops after 600 s.\n", claims, "R.md") == []
    found = [str(f) for f in lint_text("It stops after 600 s, or 700 s.\n", claims, "R.md")]
    assert found[0].startswith("R.md:1: readme.allow[0] blesses only 600, and this match also")
    assert [f.split(" is not")[0] for f in found[1:]] == ["R.md:1: '600'", "R.md:1: '700'"]
    spelled = lint_text("It stops after 600 s, twice as fast.\n", claims, "R.md")
    assert [f.text for f in spelled] == ["twice as"]  # never blessed by an allow entry
