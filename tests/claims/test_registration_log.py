"""Claims that cannot be laundered (issue 23): claims/registrations.yaml is an append-only log.
Each route is a tamper of a copy of this repository's claims files, in a git repository of its
own that borrows this one's objects (so the registration commits exist), checked through the
real CLI: `python -m stepswitch prove --check` names the claim, the file and the line, exit 1."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.claims.conftest import REPO, commit_all, copy_claims, git, line_of
from tests.harness.cli import run_ssw_cli

LOG = "claims/registrations.yaml"
ADR = "docs/decisions/0016-claims-engine.md"
PAGE = "docs/claims.md"  # every claim in full, and an index: the README holds values and its index
COPIED = (
    *("README.md", PAGE, "claims/claims.yaml", LOG, "claims/log_start.yaml"),
    *("bench/perf/results.json", ADR),
)
# The rejected claim the route-3 tampers loosen: C-007 (the first call after launch).
C007_BOUND = '    bounds: ["ssw_first_call_ms < 500"]\n'
C007_SET_BY = (
    "    bounds_set_by: shared/benchmarks.md, a real run's first model call under half a second "
    "from launch\n"
)
C007_RETRO = (
    "    retrospective: the bound is the target set before bench/perf measured; the claims "
    "engine came later\n"
)
C007_STATUS = "    status: rejected\n    reason: >-\n"


def _objects(repo: Path) -> Path | None:
    try:
        common = git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
    except subprocess.CalledProcessError:
        return None
    return Path(common) / "objects"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The repository's README, claims, registration log, evidence and C-007's input, committed
    on this repository's HEAD in a new repository whose object store borrows this one's."""
    objects = _objects(REPO)
    log = yaml.safe_load((REPO / LOG).read_text())
    entries = log.get("log") or list((log.get("registrations") or {}).values())
    shallow = git(REPO, "rev-parse", "--is-shallow-repository") == "true"
    if (
        objects is None
        or shallow
        or any(
            subprocess.run(["git", "cat-file", "-e", e["commit"]], cwd=REPO).returncode
            for e in entries
        )
    ):
        pytest.skip("this checkout's git does not have the registration commits (shallow?)")
    root = copy_claims(tmp_path / "copy", COPIED, keep=True)
    git(root, "init", "-q")
    (root / ".git/objects/info/alternates").write_text(f"{objects}\n")
    # The copy's history is this repository's: its commit follows HEAD (the files it does not
    # copy deleted), so the log's start and every measured commit are in it.
    git(root, "update-ref", "HEAD", git(REPO, "rev-parse", "HEAD"))
    commit_all(root, "copy")
    return root


def ssw(root: Path, *args: str) -> tuple[int, str]:
    done = run_ssw_cli([*args, "--root", str(root)], cwd=root, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout + done.stderr


def check(root: Path, claim: str = "C-005") -> tuple[int, list[str]]:
    """`ssw prove --check`, re-proving `claim` (the others render from their evidence files)."""
    code, out = ssw(root, "prove", "--check", "--claim", claim)
    return code, [line for line in out.splitlines() if line.startswith("problem:")]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def edit_claim(root: Path, claim: str, old: str, new: str) -> None:
    """`edit` inside one claim's block of claims.yaml."""
    path = root / "claims/claims.yaml"
    blocks = re.split(r"(?m)^(?=  - id: )", path.read_text(encoding="utf-8"))
    (at,) = [i for i, b in enumerate(blocks) if b.startswith(f"  - id: {claim}\n")]
    assert blocks[at].count(old) == 1, old
    blocks[at] = blocks[at].replace(old, new)
    path.write_text("".join(blocks), encoding="utf-8")


def entry_line(text: str, claim: str, nth: int = 0) -> int:
    """The line the `nth` entry of `claim` starts on in a registration log (in the file before
    the log, one entry per claim, the line of its key: so these tests run on the old code)."""
    node = yaml.compose(text)
    assert isinstance(node, yaml.MappingNode)
    top = {key.value: value for key, value in node.value}
    if "log" not in top:
        (start,) = [
            k.start_mark.line + 1 for k, _ in top["registrations"].value if k.value == claim
        ]
        return int(start)
    starts = [
        item.start_mark.line + 1
        for item in top["log"].value
        if any(k.value == "claim" and v.value == claim for k, v in item.value)
    ]
    return int(starts[nth])


def measured(root: Path) -> str:
    """When the perf results in `root` were measured, as they say."""
    return str(json.loads((root / "bench/perf/results.json").read_text())["date"])


def entries(root: Path, claim: str) -> list[dict[str, object]]:
    """The claim's registrations, oldest first (the old file: its one registration)."""
    data = yaml.safe_load((root / LOG).read_text())
    if "log" not in data:
        return [data["registrations"][claim]]
    return [e for e in data["log"] if e["claim"] == claim]


def delete_whole(root: Path, claim: str) -> None:
    """Route 4: the claim's claims.yaml entry, evidence file, registration and its markers in the
    README and on the claims page."""
    claims = root / "claims/claims.yaml"
    blocks = re.split(r"(?m)^(?=  - id: )", claims.read_text())
    claims.write_text("".join(b for b in blocks if not b.startswith(f"  - id: {claim}\n")))
    (root / f"claims/evidence/{claim}.json").unlink()
    log = root / LOG
    data = yaml.safe_load(log.read_text())
    if "log" in data:
        data["log"] = [e for e in data["log"] if e["claim"] != claim]
    else:  # the one-entry-per-claim file before the log, so this runs against the old code
        del data["registrations"][claim]
    log.write_text(yaml.safe_dump(data))
    whole = rf"(?m)^- <!-- claim {claim} -->.*?<!-- /claim -->\n"
    value = rf"<!-- claim {claim} \S+ -->.*?<!-- /claim -->"
    for page in (root / "README.md", root / PAGE):
        text = re.sub(whole, "", page.read_text(), flags=re.S)
        page.write_text(re.sub(value, "", text, flags=re.S))


def loosen_c007(root: Path, retrospective: str = C007_RETRO, set_by: str | None = None) -> None:
    """Route 3's edit of the rejected C-007: a looser bound, declared accepted."""
    edit_claim(root, "C-007", C007_BOUND, '    bounds: ["ssw_first_call_ms < 1000"]\n')
    edit_claim(root, "C-007", C007_RETRO, retrospective)
    new_set_by = "    bounds_set_by: the first call as this machine measures it\n"
    edit_claim(root, "C-007", C007_SET_BY, new_set_by if set_by is None else set_by)
    edit_claim(root, "C-007", C007_STATUS, "    status: accepted\n    reason: >-\n")


def test_the_untampered_copy_passes(copy: Path) -> None:
    code, out = ssw(copy, "prove", "--check", "--claim", "C-005", "--claim", "C-007")
    assert (code, [line for line in out.splitlines() if line.startswith("problem:")]) == (0, [])
    assert out.splitlines()[-1] == "2 claims: evidence and README as proving makes them"


def test_route3_a_loosened_bound_re_registered_keeps_its_old_measurement_refused(
    copy: Path,
) -> None:
    loosen_c007(copy)
    code, out = ssw(copy, "claims", "register", "C-007")
    assert code == 0, out
    ssw(copy, "prove", "--claim", "C-007")  # what a launderer runs next: rewrites the files
    code, problems = check(copy, "C-007")
    assert code == 1, problems
    second = entries(copy, "C-007")[1]
    line = entry_line((copy / LOG).read_text(), "C-007", 1)
    perf = "bench/perf/results.json"
    where = f"{perf} line {line_of(copy, perf, measured(copy))}"
    assert problems == [
        f"problem: C-007: evidence refused: {where} was measured on "
        f"{measured(copy)}, before the bounds it is judged by (ssw_first_call_ms < 1000) were "
        f"registered on {second['date']} ({LOG} line {line}): evidence measured before the "
        "registration of its bounds is refused, whatever the retrospective says"
    ]
    text = (copy / PAGE).read_text()
    assert (
        "Bound: ssw_first_call_ms < 1000, set by the first call as this machine measures it. "
        f"Bounds changed on {str(second['date'])[:10]} from ssw_first_call_ms < 500 to "
        "ssw_first_call_ms < 1000." in text
    )
    assert (
        "| C-007 | A real run reaches its first model call in under half a second | not proved, "
        f"though claims.yaml says accepted; bounds changed on {str(second['date'])[:10]} from "
        "ssw_first_call_ms < 500 to ssw_first_call_ms < 1000; measured " in text
    )


def test_route3_a_re_registration_cannot_bring_a_new_retrospective(copy: Path) -> None:
    first = entries(copy, "C-007")[0]
    loosen_c007(copy, retrospective="    retrospective: the bound was set for a faster machine\n")
    code, out = ssw(copy, "claims", "register", "C-007")
    assert (code, out) == (
        2,
        "ssw: C-007: its retrospective is not the one its first registration recorded "
        f"({first['date']}): a retrospective is allowed only at a claim's first registration\n",
    )
    ssw(copy, "prove", "--claim", "C-007")
    code, problems = check(copy, "C-007")
    assert code == 1
    assert problems[0] == (
        "problem: C-007: evidence refused: its text changed since it was registered on "
        f"{first['date']}: register it again (ssw claims register C-007); evidence from before "
        "that is then refused"
    )


def test_route3_bounds_cannot_change_without_where_they_were_decided(copy: Path) -> None:
    loosen_c007(copy, set_by=C007_SET_BY)
    code, out = ssw(copy, "claims", "register", "C-007")
    assert (code, out) == (
        2,
        "ssw: C-007: its bounds change (from ssw_first_call_ms < 500 to ssw_first_call_ms < 1000) "
        "but bounds_set_by does not: say where the new bounds were decided\n",
    )


@pytest.mark.parametrize("committed", [False, True], ids=["in-the-tree", "committed"])
def test_route4_a_claim_deleted_whole_fails_the_check(copy: Path, committed: bool) -> None:
    original = (copy / LOG).read_text()
    made, *again = entries(copy, "C-002")
    start = git(copy, "log", "-1", "--format=%H", "--", LOG)  # the log's last version
    delete_whole(copy, "C-002")
    ssw(copy, "prove", "--claim", "C-005")  # re-renders the README's index without C-002
    if committed:
        commit_all(copy, "drop C-002")
    code, problems = check(copy)
    assert code == 1, problems
    assert (
        f"problem: {LOG}: C-002's registration of {made['date']} (line "
        f"{entry_line(original, 'C-002')} at commit {start[:12]}) is gone, and C-002 with it "
        "from claims.yaml: a claim is withdrawn (status: withdrawn, reason, adr), never deleted"
    ) in problems, problems
    # The entry after each of C-002's no longer chains to the one before it, and each is gone.
    removed = 1 + len(again)
    chain = [p for p in problems if "was not appended after the entry before it" in p]
    assert (len(chain), len(problems)) == (removed, 2 * removed), problems


def test_route4_a_claim_deleted_from_the_middle_of_the_log_also_breaks_the_chain(
    copy: Path,
) -> None:
    original = (copy / LOG).read_text()
    made = entries(copy, "C-006")[0]
    after = entries(copy, "C-007")[0]
    start = git(copy, "log", "-1", "--format=%H", "--", LOG)  # the log's last version
    delete_whole(copy, "C-006")
    ssw(copy, "prove", "--claim", "C-005")
    code, problems = check(copy)
    assert code == 1
    line = entry_line((copy / LOG).read_text(), "C-007")
    # C-006 was registered twice: each removed entry breaks the chain after it.
    assert problems[0] == (
        f"problem: {LOG} line {line} (C-007's registration of {after['date']}) was not "
        "appended after the entry before it: an earlier entry was edited, removed or inserted; "
        "the log is append-only: an entry is never edited or removed"
    )
    assert (
        f"problem: {LOG}: C-006's registration of {made['date']} (line "
        f"{entry_line(original, 'C-006')} at commit {start[:12]}) is gone, and C-006 with it "
        "from claims.yaml: a claim is withdrawn (status: withdrawn, reason, adr), never deleted"
    ) in problems, problems


def test_an_earlier_entry_edited_fails_the_check(copy: Path) -> None:
    text = (copy / LOG).read_text()
    start = git(copy, "log", "-1", "--format=%H", "--", LOG)  # the log's last version
    line = entry_line(text, "C-007")
    # the old file recorded no bounds: this tamper needs the log (it fails on the old code)
    edit(copy / LOG, "  - ssw_first_call_ms < 500\n", "  - ssw_first_call_ms < 5000\n")
    made, after = entries(copy, "C-007")[0], entries(copy, "C-008")[0]
    code, problems = check(copy)
    assert code == 1, problems
    assert problems == [
        f"problem: {LOG} line {entry_line(text, 'C-008')} (C-008's registration of "
        f"{after['date']}) was not appended after the entry before it: an earlier entry was "
        "edited, removed or inserted; the log is append-only: an entry is never edited or removed",
        f"problem: {LOG}: C-007's registration of {made['date']} (line {line} at commit "
        f"{start[:12]}) is gone or edited: the log is append-only: an entry is never edited or "
        "removed",
    ]


WITHDRAWING = "docs/decisions/0999-c007-withdrawn.md"


def test_a_withdrawn_claim_stays_registered_and_shown_with_its_reason(copy: Path) -> None:
    # The record that withdraws it names it and comes after the commit of its rejection.
    (copy / WITHDRAWING).write_text("# 0999: C-007 is withdrawn\n")
    commit_all(copy, "the record withdrawing C-007")
    withdrawn = f"    status: withdrawn\n    adr: {WITHDRAWING}\n    reason: >-\n"
    edit_claim(copy, "C-007", C007_STATUS, withdrawn)
    code, out = ssw(copy, "prove", "--claim", "C-007")
    assert code == 0, out
    code, problems = check(copy, "C-007")
    assert (code, problems) == (0, [])
    text = (copy / PAGE).read_text()
    assert "- <!-- claim C-007 -->**C-007 (withdrawn: re-measured: a real ssw run now runs" in text
    assert (
        "| C-007 | A real run reaches its first model call in under half a second | withdrawn: "
        in text
    )


def test_a_withdrawal_by_a_record_older_than_the_rejection_is_refused(copy: Path) -> None:
    # ADR 0016 was committed before the rejection: withdrawing by it hides nothing it decided.
    # The control is the test above.
    withdrawn = f"    status: withdrawn\n    adr: {ADR}\n    reason: >-\n"
    edit_claim(copy, "C-007", C007_STATUS, withdrawn)
    code, out = ssw(copy, "prove", "--claim", "C-007")
    assert code == 1
    problems = [line for line in out.splitlines() if line.startswith("problem: C-007: withdrawn")]
    added = git(copy, "log", "--diff-filter=A", "--format=%H", "--", ADR).split()[-1]
    text = (copy / "claims/claims.yaml").read_text().splitlines()
    at = text.index("  - id: C-007") + next(
        n for n, line in enumerate(text[text.index("  - id: C-007") :], 1) if "adr:" in line
    )
    where = f"{ADR} (claims/claims.yaml line {at})"
    assert problems[0] == (
        f"problem: C-007: withdrawn by {where}, which does not name C-007: the record that "
        "withdraws a claim says which claim and why"
    )
    assert problems[1].startswith(
        f"problem: C-007: withdrawn by {where}, added at commit {added[:12]}, not after the "
        "rejection committed at "
    ), problems
    assert problems[1].endswith(": write the record that withdraws it after the rejection")
