"""gates.inrun recomputes bench/gates/inrun.py's figures from each project's rows and refuses a
summary that disagrees with them."""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

import pytest

from stepswitch.claims.inputs import EvidenceError, Inputs, Unprovable
from stepswitch.claims.metrics import all_metrics

FIELDS = ["id", "caught", "first_failing_verdict_s", "full_x_s", "full_s", "ratio_vs_full_x"]


def _write(root: Path, project: str, rows: list[tuple[bool, float, float, float]]) -> None:
    """rows: (caught, first failing verdict s, full -x s, full s)."""
    folder = root / "bench/gates"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"results-{project}.csv").open("w", newline="") as out:
        writer = csv.DictWriter(out, FIELDS)
        writer.writeheader()
        for i, (caught, first, full_x, full) in enumerate(rows, start=1):
            writer.writerow(
                {
                    "id": f"m{i:02d}",
                    "caught": caught,
                    "first_failing_verdict_s": first if caught else "",
                    "full_x_s": full_x,
                    "full_s": full,
                    "ratio_vs_full_x": round(full_x / first, 2) if caught else "",
                }
            )
    caught = [r for r in rows if r[0]]

    def spread(values: list[float]) -> dict[str, float]:
        return {
            "median": round(statistics.median(values), 2),
            "min": round(min(values), 2),
            "max": round(max(values), 2),
        }

    summary = {
        "project": project,
        "version": "1.0",
        "measured": "2026-12-01T12:00:00Z",
        "stepswitch_commit": "0123456789abcdef0123456789abcdef01234567",
        "stepswitch_dirty": False,
        "mutations": len(rows),
        "missed": len(rows) - len(caught),
        "ratio_vs_full_x": spread([r[2] / r[1] for r in caught]),
        "ratio_vs_full": spread([r[3] / r[1] for r in caught]),
    }
    (folder / f"summary-{project}.json").write_text(json.dumps(summary))


def _compute(root: Path, *projects: str):
    inputs = Inputs(
        root,
        {
            "summaries": [f"bench/gates/summary-{p}.json" for p in projects],
            "results": [f"bench/gates/results-{p}.csv" for p in projects],
        },
    )
    return all_metrics()["gates.inrun"].compute(inputs), inputs


def test_the_worst_project_and_every_miss_are_what_the_claim_reports(tmp_path: Path) -> None:
    _write(tmp_path, "flat", [(True, 1.0, 4.0, 9.0), (True, 2.0, 10.0, 20.0), (True, 1.0, 6.0, 9)])
    _write(tmp_path, "src", [(True, 1.0, 2.0, 8.0), (False, 0.0, 5.0, 9.0), (True, 0.5, 2.0, 9)])
    computed, inputs = _compute(tmp_path, "flat", "src")
    values = computed.values
    assert values["projects"] == 2 and values["project_names"] == "flat, src"
    assert values["mutations"] == 6 and values["fewest_mutations"] == 3
    assert values["worst_median_ratio_x"] == pytest.approx(3.0)  # src: 2.0 and 4.0
    assert values["worst_median_ratio_full"] == pytest.approx(9.0)  # flat: 9, 10, 9
    assert values["worst_min_ratio_x"] == pytest.approx(2.0)
    assert values["missed"] == 1
    assert "src 3.00x and 13.00x over 3 mutations, 1 missed" in str(values["per_project"])
    assert values["measured_on"] == "2026-12-01"
    assert values["measured_commit"] == "0123456789ab"
    assert set(inputs.measured) == {"bench/gates/summary-flat.json", "bench/gates/summary-src.json"}


def test_a_summary_that_disagrees_with_its_rows_cannot_prove(tmp_path: Path) -> None:
    _write(tmp_path, "flat", [(True, 1.0, 4.0, 9.0), (True, 2.0, 10.0, 20.0)])
    path = tmp_path / "bench/gates/summary-flat.json"
    summary = json.loads(path.read_text())
    summary["ratio_vs_full_x"]["median"] = 6.0
    path.write_text(json.dumps(summary))
    disagrees = r"ratio_vs_full_x\.median is 6, but the raw rows give 4\.5"
    with pytest.raises(Unprovable, match=disagrees):
        _compute(tmp_path, "flat")


def test_summaries_and_results_must_pair_up_by_project(tmp_path: Path) -> None:
    _write(tmp_path, "flat", [(True, 1.0, 4.0, 9.0)])
    _write(tmp_path, "src", [(True, 1.0, 4.0, 9.0)])
    inputs = Inputs(
        tmp_path,
        {
            "summaries": ["bench/gates/summary-flat.json", "bench/gates/summary-src.json"],
            "results": ["bench/gates/results-src.csv", "bench/gates/results-flat.csv"],
        },
    )
    with pytest.raises(EvidenceError, match="is for flat, but its rows are"):
        all_metrics()["gates.inrun"].compute(inputs)


@pytest.mark.parametrize(
    ("dirty", "why"), [(True, "had uncommitted changes"), (None, "is not known")]
)
def test_a_summary_measured_on_a_dirty_or_unknown_tree_cannot_prove(
    tmp_path: Path, dirty: bool | None, why: str
) -> None:
    """ADR 0028: a gates summary says the ssw commit it measured and whether the tree had
    uncommitted changes; one that had, or does not say, proves nothing."""
    _write(tmp_path, "flat", [(True, 1.0, 4.0, 9.0)])
    path = tmp_path / "bench/gates/summary-flat.json"
    summary = json.loads(path.read_text())
    if dirty is None:
        del summary["stepswitch_dirty"]
    else:
        summary["stepswitch_dirty"] = dirty
    path.write_text(json.dumps(summary))
    with pytest.raises(Unprovable, match=f"summary-flat.json: the tree it was made from {why}"):
        _compute(tmp_path, "flat")
