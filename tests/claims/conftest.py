"""A small repository with claims, evidence and a README, in a temp folder with real git; and `ssw`
run as a user runs it."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.harness import repo as harness
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import commit_all

REPO = Path(__file__).resolve().parents[2]

# claims.yaml up to its claims: the version and the README (claim ids are a rule of the lint).
CLAIMS_HEAD = """\
schema_version: 1
readme:
  path: README.md
claims:
"""
# Two claims: the perf overhead (C-001) and the gates speedup (C-002).
OVERHEAD_CLAIM = """\
  - id: C-001
    title: Overhead per step is at most a third of the peer's
    statement: "ssw {ssw_ms} ms against {mini_ms} ms, a ratio of {ratio} over {steps} steps."
    metrics: [perf.overhead]
    evidence: {results: bench/perf/results.json}
    bounds: ["ratio <= 1/3"]
    bounds_set_by: the perf issue
    retrospective: the bound was set before the measurement
    status: accepted
"""
SPEEDUP_CLAIM = """\
  - id: C-002
    title: Impacted tests first are sooner
    statement: "{median_ratio} sooner on {tests} tests; {missed_after_both} missed."
    metrics: [gates.speedup]
    evidence: {summary: bench/gates/summary.json, results: bench/gates/results.csv}
    bounds: ["median_ratio >= 5", "missed_after_both == 0"]
    bounds_set_by: the gates issue
    retrospective: the bounds were set before the measurement
    status: accepted
"""
CLAIMS = CLAIMS_HEAD + OVERHEAD_CLAIM + SPEEDUP_CLAIM

README = """\
# Demo

Version 2.4.6 of something, outside any claims section: not linted.

## Benchmarks

<!-- claims-section -->
The overhead ratio is <!-- claim C-001 ratio --><!-- /claim --> of the peer's.

- <!-- claim C-001 --><!-- /claim -->
- <!-- claim C-002 --><!-- /claim -->

See C-002 too.
<!-- claims-index --><!-- /claims-index -->
<!-- /claims-section -->
"""


def git(root: Path, *args: str) -> str:
    """`git ARGS` in `root` (tests.harness.repo.git), its output stripped."""
    return harness.git(root, *args).strip()


# The ssw commits the fixtures name (the perf results' abbreviated, the gates summary's whole):
# commits of this repository, not of a test's; and a date before every fixture's measurement.
FIXTURE_COMMITS = ("5752c06", "da5157def07184794a96ff2228bbb3b64bc2590b")
MEASURED_CODE_DATE = "2026-11-28T00:00:00+00:00"
_NAMED_COMMIT = re.compile(r'"(?:stepswitch_)?commit": "([0-9a-f]{7,40})"')


def measured_code(root: Path) -> str:
    """A new git repository at `root` whose first commit, dated before every fixture's
    measurement, stands for the ssw commit the fixtures were measured at; its hash."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    dates = {"GIT_AUTHOR_DATE": MEASURED_CODE_DATE, "GIT_COMMITTER_DATE": MEASURED_CODE_DATE}
    harness.git(root, "commit", "-q", "--allow-empty", "-m", "the measured code", env=dates)
    return git(root, "rev-parse", "HEAD")


def copy_fixture(root: Path, rel: str, source: str) -> Path:
    """REPO's `source` at root/rel, the ssw commit it names replaced by `root`'s first (see
    measured_code): a measurement names a commit of the history it is checked in (ADR 0078)."""
    first = git(root, "rev-list", "--max-parents=0", "HEAD")
    text = (REPO / source).read_text(encoding="utf-8")
    # the fixtures' commits, and the one a re-measured record of bench/ names
    named_here = {m.group(1) for m in _NAMED_COMMIT.finditer(text)}
    for named in sorted({*FIXTURE_COMMITS, *named_here}, key=len, reverse=True):
        text = text.replace(named, first[: len(named)])
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def line_of(root: Path, rel: str, needle: str) -> int:
    """The number of the first line of root/rel that holds `needle`: where a problem points."""
    lines = (root / rel).read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if needle in line)


def ssw(root: Path, *args: str) -> tuple[int, str]:
    """Exit code and output of `ssw ARGS --root ROOT`, run as a user runs it (tests.harness.cli):
    its standard output, then its standard error (a one-line error) without the line's end."""
    done = run_ssw_cli([*args, "--root", str(root)], cwd=root, timeout=120)
    return done.returncode, done.stdout + done.stderr.removesuffix("\n")


def copy_claims(root: Path, copied: tuple[str, ...], *, keep: bool = False) -> Path:
    """This repository's files `copied`, claims/evidence and the records that withdraw claims
    under `root`, and an empty stand-in for every other claim's input (they must exist to load
    claims.yaml; they are not read): a folder for a folder, with a `.keep` in it when `keep`
    (for git to commit it). With claims.yaml come the modules its readme.allow names: `ssw prove`
    reads each constant."""
    from stepswitch.claims.model import load_claims

    if "claims/claims.yaml" in copied:
        allowed = load_claims(REPO).readme.allow
        copied = (*copied, *sorted({str(a.source).rpartition(":")[0] for a in allowed}))
    for rel in copied:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, root / rel)
    shutil.copytree(REPO / "claims/evidence", root / "claims/evidence")
    for lc in load_claims(REPO).claims:
        if lc.claim.adr is not None and not (root / lc.claim.adr).exists():
            # the record that withdraws a claim, which claims.yaml must find
            (root / lc.claim.adr).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / lc.claim.adr, root / lc.claim.adr)
        for paths in lc.evidence.values():
            for rel in paths:
                stand_in = root / rel.rstrip("/")
                if (REPO / rel).is_dir():
                    stand_in.mkdir(parents=True, exist_ok=True)
                    if keep:
                        (stand_in / ".keep").write_text("")
                elif not stand_in.exists():
                    stand_in.parent.mkdir(parents=True, exist_ok=True)
                    stand_in.write_text("")
    return root


def register_all(root: Path, now: datetime | None = None) -> None:
    from stepswitch.claims.model import load_claims
    from stepswitch.claims.registration import register

    for lc in load_claims(root).claims:
        register(root, lc.claim, now)


def later(minutes: int = 1) -> datetime:
    """A time after every commit the test made: registrations may not predate their commit."""
    return datetime.now(UTC) + timedelta(minutes=minutes)


def build_repo(
    root: Path,
    claims: str = CLAIMS,
    readme: str = README,
    prove: bool = True,
    expect: int = 0,
    register: bool = True,
) -> Path:
    """The small repository at `root`: the fixed inputs, claims.yaml and README committed,
    registered (`register`) and proved by the CLI (`prove`, which must exit `expect`)."""
    measured_code(root)
    # Fixed inputs, not the repository's latest measurements: a re-measurement must not
    # change what these tests expect (the perf file is the 2026-11-29 run, ratio 0.30; the
    # gates files a packaging run of bench/gates/bench.py from a committed tree).
    for rel, source in (
        ("bench/perf/results.json", "tests/fixtures/claims/perf-results.json"),
        ("bench/gates/summary.json", "tests/fixtures/claims/gates-summary.json"),
        ("bench/gates/results.csv", "tests/fixtures/claims/gates-results.csv"),
    ):
        copy_fixture(root, rel, source)
    (root / "claims").mkdir()
    (root / "claims/claims.yaml").write_text(claims)
    (root / "README.md").write_text(readme)
    commit_all(root, "start")
    if register:
        register_all(root)
    if prove:
        code, out = ssw(root, "prove")
        assert code == expect, out
    return root


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    def make(**kwargs: Any) -> Path:
        return build_repo(tmp_path / "repo", **kwargs)

    return make


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo()


def lint_findings(text: str) -> list[str]:
    """What the lint finds in `text` as a Markdown file with no claims and no allow entries."""
    from stepswitch.claims.lint import lint_text
    from stepswitch.claims.model import Claims, ReadmeSpec

    return [f.text for f in lint_text(text, Claims(Path("."), ReadmeSpec(), (), ()), "R.md")]


INRUN_CLAIM = """\
  - id: {id}
    title: Inside a real run the gates miss no failure
    statement: "{{missed}} of {{mutations}} mutations missed on {{project_names}}."
    metrics: [gates.inrun]
    evidence:
      summaries: [{summaries}]
      results: [{results}]
    bounds: ["missed == 0"]
    bounds_set_by: the gates issue
    retrospective: the bound was set before the measurement
    status: accepted
"""


def inrun_claim(claim_id: str, projects: tuple[str, ...]) -> str:
    """A gates.inrun claim over the committed bench/gates records of `projects`."""
    return INRUN_CLAIM.format(
        id=claim_id,
        summaries=", ".join(f"bench/gates/summary-{p}.json" for p in projects),
        results=", ".join(f"bench/gates/results-{p}.csv" for p in projects),
    )
