"""Print the README's results table from results.csv: `python bench/gates/report.py`."""

from __future__ import annotations

import csv

import common

_STOP = " (),:[]"


def edit(before: str, after: str) -> str:
    """The changed words of a one-line mutation, e.g. `==` -> `!=`."""
    i = 0
    while i < min(len(before), len(after)) and before[i] == after[i]:
        i += 1
    j = 0
    while j < min(len(before), len(after)) - i and before[-1 - j] == after[-1 - j]:
        j += 1
    # Widen both sides to whole words; a pure insertion shows the word before it.
    while i > 0 and before[i - 1] not in _STOP:
        i -= 1
    if before[i : len(before) - j].strip() == "":
        while i > 0 and before[i - 1] == " ":
            i -= 1
        while i > 0 and before[i - 1] not in _STOP:
            i -= 1
    while j > 0 and before[len(before) - j] not in _STOP:
        j -= 1
    while j > 0 and any(
        t.count("(") > t.count(")")
        for t in (before[i : len(before) - j], after[i : len(after) - j])
    ):
        j -= 1  # close the parentheses the edit opened
    old = before[i : len(before) - j].strip()
    new = after[i : len(after) - j].strip()
    text = f"`{old}` → `{new}`"
    return text.replace("|", "\\|") if len(text) <= 60 else ""


def main() -> None:
    with common.RESULTS_CSV.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    print(
        "| id | module:line | mutation | selected files | selection ms | impacted-first s "
        "| full -x s | ratio | what-if files | what-if ratio |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        change = edit(r["before"], r["after"])
        missed = " (missed)" if r["missed_by_impacted"] == "True" else ""
        print(
            f"| {r['id']} | {r['module'].removeprefix('src/packaging/')}:{r['line']} "
            f"| {r['kind']} {change} | {r['selected_files']}/{r['total_test_files']} "
            f"| {float(r['selection_s']) * 1000:.1f} | {float(r['impacted_first_verdict_s']):.2f}"
            f"{missed} | {float(r['full_first_verdict_s']):.2f} | {float(r['ratio']):.2f} "
            f"| {r['whatif_selected_files']} | {float(r['whatif_ratio']):.2f} |"
        )


if __name__ == "__main__":
    main()
