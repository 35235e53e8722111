"""A claim measured again shows its earlier measurements (issue 23, ADR 0016): its evidence file
keeps them and `ssw prove` finds them again in git's history of that file, so a README or an
evidence file that drops one fails `ssw prove --check`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.claims.conftest import CLAIMS, CLAIMS_HEAD, commit_all, git, ssw

ONE_CLAIM = CLAIMS_HEAD + CLAIMS[len(CLAIMS_HEAD) :].split("  - id: C-002")[0]
ONE_README = """\
# Demo

## Benchmarks

<!-- claims-section -->
- <!-- claim C-001 --><!-- /claim -->
<!-- claims-index --><!-- /claims-index -->
<!-- /claims-section -->
"""
EARLIER = "Measured before: accepted on 2026-11-29 (ratio 0.30), evidence at commit"


def _measure_again(root: Path) -> None:
    """A new measurement: the results file's bytes change (the load it recorded), its figures
    not."""
    path = root / "bench/perf/results.json"
    data = json.loads(path.read_text())
    data["machine"]["load_average_at_start"] = [0.5, 0.5, 0.5]
    path.write_text(json.dumps(data, indent=1))


def _remeasured(make_repo: Callable[..., Path]) -> tuple[Path, str]:
    root = make_repo(claims=ONE_CLAIM, readme=ONE_README)
    first = commit_all(root, "first measurement")
    _measure_again(root)
    code, out = ssw(root, "prove")
    assert code == 0, out
    commit_all(root, "second measurement")
    readme = (root / "README.md").read_text()
    assert f"{EARLIER} {first[:12]}." in readme
    assert "| accepted; measured 2 times |" in readme
    return root, first


def test_a_claim_measured_again_names_its_earlier_measurement(
    make_repo: Callable[..., Path],
) -> None:
    root, _ = _remeasured(make_repo)
    code, out = ssw(root, "prove", "--check")
    assert code == 0, out


def test_a_readme_that_drops_the_earlier_measurement_fails_the_check(
    make_repo: Callable[..., Path],
) -> None:
    root, first = _remeasured(make_repo)
    path = root / "README.md"
    text = path.read_text()
    at = text[: text.index(EARLIER)].count("\n") + 1
    path.write_text(text.replace(f" {EARLIER} {first[:12]}.", ""))
    code, out = ssw(root, "prove", "--check")
    assert code == 1
    assert f"README.md would change at line {at} (claim C-001)" in out


def test_the_same_inputs_proved_again_are_one_measurement(make_repo: Callable[..., Path]) -> None:
    root = make_repo(claims=ONE_CLAIM, readme=ONE_README)
    commit_all(root, "first")
    code, out = ssw(root, "prove")  # nothing measured again: no history
    assert code == 0, out
    assert "Measured before" not in (root / "README.md").read_text()


def test_an_evidence_file_that_drops_the_earlier_measurement_fails_the_check(
    make_repo: Callable[..., Path],
) -> None:
    root, first = _remeasured(make_repo)
    path = root / "claims/evidence/C-001.json"
    data = json.loads(path.read_text())
    assert [e["commit"] for e in data["earlier"]] == [first]
    data["earlier"] = []
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    commit_all(root, "forget the first measurement")
    code, out = ssw(root, "prove", "--check")
    assert code == 1
    assert "claims/evidence/C-001.json would change" in out


def test_a_measurement_replaced_before_any_commit_is_still_shown(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(claims=ONE_CLAIM, readme=ONE_README)  # proved, not committed
    _measure_again(root)
    code, out = ssw(root, "prove")
    assert code == 0, out
    assert (
        f"{EARLIER.removesuffix(' at commit')} never committed." in (root / "README.md").read_text()
    )


def test_a_shallow_clone_is_refused_until_deepened_then_finds_them_in_git(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    """A clone whose history does not reach the log's start cannot tell what git would show:
    refused in one line (ADR 0078); fetched deeper, it proves as the repository does."""
    root, first = _remeasured(make_repo)
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{root}", str(clone))
    code, out = ssw(clone, "prove", "--check")
    assert code == 2, out
    assert out.startswith("ssw: this clone's history is shallow and does not reach commit "), out
    assert out.endswith(": fetch deeper (git fetch --unshallow), then run ssw prove again"), out
    code, out = ssw(clone, "prove", "--check", "--allow-shallow")
    assert code == 0, out
    assert "not checked: claims/registrations.yaml against git: this clone's history" in out
    git(clone, "fetch", "-q", "--unshallow")
    code, out = ssw(clone, "prove", "--check")
    assert (code, "not checked" in out) == (0, False), out
    assert f"{EARLIER} {first[:12]}." in (clone / "README.md").read_text()
