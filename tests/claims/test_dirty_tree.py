"""Issue 23, route 6: evidence measured on a tree with uncommitted changes proves nothing
(docs/decisions/0028-evidence-from-committed-trees.md). The perf results record whether src/ had
changes when the measurement started; a copy that says it had is refused by `ssw prove --check`,
naming the claim, the file and the flag, even after it is proved again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.claims.test_raw_samples import PERF, edit_json, perf_repo, reprove_and_check

__all__ = ["perf_repo"]  # the fixture, used by name


def test_perf_evidence_measured_on_a_dirty_tree_is_refused(perf_repo: Path) -> None:
    def dirty(data: dict[str, Any]) -> None:
        data["machine"]["stepswitch_src_uncommitted_changes"] = True

    edit_json(perf_repo / PERF, dirty)
    code, out = reprove_and_check(perf_repo)
    assert code == 1, out
    for claim in ("C-001", "C-002"):
        assert (
            f"problem: {claim}: the evidence cannot prove it: {PERF}: measured with uncommitted "
            "changes in src/" in out
        ), out


def test_perf_evidence_that_does_not_say_whether_its_tree_was_clean_is_refused(
    perf_repo: Path,
) -> None:
    edit_json(
        perf_repo / PERF, lambda data: data["machine"].pop("stepswitch_src_uncommitted_changes")
    )
    code, out = reprove_and_check(perf_repo)
    assert code != 0, out
    assert "stepswitch_src_uncommitted_changes" in out, out
