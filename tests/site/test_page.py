"""The replay page built from recorded runs: what it shows, what it never holds, and how it takes
bench run folders that are incomplete."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stepswitch.bench.files import ResultRow
from stepswitch.bench.results import csv_text
from stepswitch.cli.site import site_app
from stepswitch.demo.as_if import AS_IF, LARGEST, as_if_models, step_usd
from stepswitch.errors import UsageError
from stepswitch.records.folder import load_run
from stepswitch.records.money import format_usd
from stepswitch.records.steps import ModelStep, ToolCallRecord
from stepswitch.registry.presets import load_registry
from stepswitch.site.build import build_site

from .conftest import CONTESTANTS, FAILED_REPORT, DemoRun, model_step, write_bench, write_run

REPO = Path(__file__).resolve().parents[2]
SECRET_SHAPED = [
    re.compile(r"sk-[A-Za-z0-9_-]{12,}"),
    re.compile(r"(?i)bearer\s+[A-Za-z0-9._-]{12,}"),
    re.compile(r"(?i)(api[_-]?key|secret|token|password)\s*[=:]\s*\S{8,}"),
]
BLOCK = re.compile(r'<script type="application/json" id="([^"]+)">(.*?)</script>', re.S)


def blocks(html: str) -> dict[str, Any]:
    return {m.group(1): json.loads(m.group(2)) for m in BLOCK.finditer(html)}


def task_block(html: str, board: int = 0, task: int = 0) -> dict[str, Any]:
    return blocks(html)[f"d-b{board}-t{task}"]


def test_a_demo_run_page_shows_every_step_with_its_model_tokens_dollars_and_tools(
    demo_run: DemoRun, page_of: Any
):
    html = page_of(demo_run.folder)
    loaded = load_run(demo_run.folder)
    data = task_block(html)
    (run,) = data["runs"][data["contestants"][0]]

    kinds = [e["kind"] for e in run["events"]]
    assert kinds == [e.kind for e in loaded.steps]
    steps = [e for e in run["events"] if e["kind"] == "model_step"]
    recorded = loaded.model_steps
    assert [(s["step_type"], s["worker"], s["model"]) for s in steps] == [
        (s.step_type, s.worker, s.model) for s in recorded
    ]
    first = recorded[2]
    assert steps[2]["tokens_text"] == (
        f"in {first.prompt_tokens:,} "
        f"({first.cached_tokens / first.prompt_tokens:.0%} cached) out {first.completion_tokens:,}"
    )
    assert {s["cost_text"] for s in steps} == {"$0.0000"}
    assert steps[1]["tool_calls"][0]["name"] == "find_files"
    assert run["outcome"] == "done" and run["review_verdict"] == "approve"
    review = next(e for e in run["events"] if e["kind"] == "review")["review"]
    assert review["second_opinion"] == "approve"
    assert f"in {demo_run.record.totals.prompt_tokens:,}" in html  # the totals row


def test_scripted_runs_carry_their_label_on_every_view(demo_run: DemoRun, page_of: Any):
    html = page_of(demo_run.folder)
    data = task_block(html)
    (run,) = data["runs"][data["contestants"][0]]

    assert "SCRIPTED: these runs replay scripted replies" in html  # the banner
    assert run["labels"] == ["scripted"]  # the task view's column and run
    assert all(e["scripted"] for e in run["events"] if e["kind"] == "model_step")  # each step
    totals = html.split("<table class='totals'>")[1].split("</table>")[0]
    tasks = html.split("<table class='tasks'>")[1].split("</table>")[0]
    legend = html.split('<p class="legend">')[1].split("</p>")[0]
    for view in (totals, tasks, legend):
        assert '<span class="badge b-scripted">scripted</span>' in view


def test_a_scripted_demo_run_shows_its_bill_as_if_the_ladder_had_served_it(
    demo_run: DemoRun, page_of: Any
):
    html = page_of(demo_run.folder)
    data = task_block(html)
    (run,) = data["runs"][data["contestants"][0]]
    steps = load_run(demo_run.folder).model_steps
    models = as_if_models(load_registry())
    routed = sum(step_usd(models[s.worker].price, s) for s in steps)
    alone = sum(step_usd(models[LARGEST].price, s) for s in steps)

    text = "\n".join(run["as_if"])
    assert alone > routed > 0
    assert text.startswith(
        "as if served by the Anthropic ladder: the scripted replies' token counts at list prices"
    )
    assert re.search(rf"routed by the policy\s+\{format_usd(routed)} over 12 steps", text)
    assert re.search(rf"on claude-opus-5 alone\s+\{format_usd(alone)}", text)
    assert text.endswith("the recorded bill stays $0.0000: no model was called")
    assert run["bill"] == "$0.0000"  # the record's own bill, as recorded
    shown = [e.get("as_if_text") for e in run["events"] if e["kind"] == "model_step"]
    assert shown == [
        f"{AS_IF[s.worker][1]}: {format_usd(step_usd(models[s.worker].price, s))} at list price"
        for s in steps
    ]


def test_the_as_if_bill_is_priced_from_the_steps_recorded_when_the_page_is_built(
    demo_run: DemoRun, page_of: Any, tmp_path: Path
):
    folder = tmp_path / "run"
    shutil.copytree(demo_run.folder, folder, ignore=shutil.ignore_patterns("replay"))
    lines = (folder / "steps.jsonl").read_text().splitlines()
    doubled = []
    for line in lines:  # every model step's output tokens doubled in the record
        event = json.loads(line)
        if event["kind"] == "model_step":
            event["completion_tokens"] *= 2
        doubled.append(json.dumps(event))
    (folder / "steps.jsonl").write_text("\n".join(doubled) + "\n")
    steps = load_run(folder).model_steps
    models = as_if_models(load_registry())
    alone = sum(step_usd(models[LARGEST].price, s) for s in steps)

    data = task_block(page_of(folder))
    (run,) = data["runs"][data["contestants"][0]]
    text = "\n".join(run["as_if"])
    assert re.search(rf"on claude-opus-5 alone\s+\{format_usd(alone)}", text)


def test_runs_that_are_not_the_demos_workers_show_no_as_if_bill(tmp_path: Path, page_of: Any):
    html = page_of(write_bench(tmp_path / "b", oracle=True))  # real providers, and the oracle
    runs = [r for c, rs in task_block(html)["runs"].items() for r in rs]

    assert len(runs) == 3 and all(r["as_if"] == [] for r in runs)
    assert not [e for r in runs for e in r["events"] if "as_if_text" in e]


def test_the_page_holds_no_secret_shaped_string_and_no_absolute_path_of_the_machine(
    demo_run: DemoRun, page_of: Any, tmp_path: Path
):
    html = page_of(demo_run.folder)

    assert [p.pattern for p in SECRET_SHAPED if p.search(html)] == []
    for folder in (tmp_path, demo_run.repo, Path.home(), REPO):
        assert str(folder) not in html
    # The demo's policy lies outside the sample repository: the record names its file only.
    assert demo_run.record.policy_path == "policy.toml" and "policy.toml" in html
    assert "reasoning_content" not in html and "encrypted" not in html


def test_the_page_loads_nothing_from_anywhere(demo_run: DemoRun, page_of: Any):
    html = page_of(demo_run.folder)

    assert re.findall(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html) == []
    assert "<link" not in html and "@import" not in html and "url(" not in html
    assert "default-src 'none'" in html  # the page's own policy forbids any fetch


def test_text_from_a_record_cannot_end_its_block_or_inject_markup(tmp_path: Path, page_of: Any):
    hostile = "</script><script>alert(1)</script><!-- <b>bold</b>"
    step = model_step(
        20,
        9,
        "run",
        "small",
        tool_calls=[ToolCallRecord(name="run", arguments="{}", ok=True, output=hostile)],
    )
    folder = write_run(tmp_path / "r1", run_id="r1", task=hostile, extra_events=[step])
    html = page_of(folder)

    assert "<script>alert(1)" not in html
    assert html.count("<script") == len(blocks(html)) + 1  # the data blocks and the page's own
    outputs = [
        c["output"]
        for e in task_block(html)["runs"]["ladder.toml"][0]["events"]
        if e["kind"] == "model_step"
        for c in e["tool_calls"]
    ]
    assert hostile in outputs  # kept as recorded, shown as text


def test_a_bench_run_shows_contestants_side_by_side_with_totals_grades_and_the_paired_summary(
    bench_run: Path, page_of: Any
):
    html = page_of(bench_run)
    first, second = task_block(html, task=0), task_block(html, task=1)

    assert first["task"] == "general/mean_bug" and second["task"] == "general/median_feature"
    assert first["contestants"] == list(CONTESTANTS)
    ladder = first["runs"]["ladder"][0]
    kinds = [e["kind"] for e in ladder["events"]]
    assert kinds.count("gates") == 2 and "escalation" in kinds
    failed = next(e for e in ladder["events"] if e["kind"] == "gates")
    assert (failed["note"], failed["gates"][0]["report"]) == ("failed: tests", FAILED_REPORT)
    edit = next(e for e in ladder["events"] if e.get("step_type") == "edit")
    assert [c["refused"] for c in edit["tool_calls"]] == [True, False]
    review = next(e for e in ladder["events"] if e["kind"] == "review")["review"]
    assert (review["second_opinion"], review["agree"]) == ("reject", False)
    assert second["runs"]["ultra"][0]["grade"] == "failed (1 failed, 3 passed)"
    totals = html.split("<table class='totals'>")[1].split("</table>")[0]
    assert "<td>ladder</td><td>2</td><td>2</td><td>2 of 2</td><td>$0.0120</td>" in totals
    assert "<td>ultra</td><td>2</td><td>2</td><td>1 of 2</td>" in totals
    # escalations, gate failures, refusals, review rejections
    assert "<td>1</td><td>1</td><td>2</td><td>0</td></tr>" in totals
    assert (
        "<li><b>ladder</b> vs <b>ultra</b>, dollars per task run, ratio a / b: 0.42 "
        "(95% interval 0.31 to 0.55); n = 2; cluster bootstrap over tasks</li>"
    ) in html
    assert "pass rate, difference a - b: 0.5 (95% interval 0 to 1); n = 2" in html
    assert "dollars per task, difference: $-0.0123 (95% interval $-0.0200 to $-0.0040)" in html
    assert (
        "<dt>task_runs</dt><dd>4</dd>" in html
        and "schema_version" not in html.split("Paired summary")[1].split("</dl>")[0]
    )
    dollars = html.split("<table class='dollars'>")[1].split("</table>")[0]
    assert "<th>$ per passed task</th><th>$ on runs not done</th>" in dollars
    assert "<tr><td>ladder</td><td>100.0%</td>" in dollars


def test_the_chart_is_inline_svg_with_a_bar_per_contestant_linking_to_each_task(
    bench_run: Path, page_of: Any
):
    html = page_of(bench_run)
    svg = html.split('<svg class="chart"')[1].split("</svg>")[0]

    assert svg.count('<a href="#b0/t') == 2
    assert svg.count("<rect") == 2 * 2 * 2  # tasks x contestants x (low, high)
    assert "general/mean_bug - ladder: $0.0060, done" in svg


def test_the_charts_caption_is_page_text_under_the_chart_not_clipped_inside_it(
    demo_run: DemoRun, page_of: Any
):
    html = page_of(demo_run.folder)
    box = html.split("<div class='chart-box'>")[1].split("</div>")[0]

    svg, after = box.split("</svg>")
    assert "every task run here cost" not in svg
    assert after == (
        '<p class="chart-caption">one bar per contestant: its first attempt at the task; '
        "every task run here cost $0.0000</p>"
    )


def test_a_bench_run_without_results_or_summary_still_shows_and_says_what_is_missing(
    tmp_path: Path, page_of: Any
):
    root = write_bench(tmp_path / "b", results=False, summary=False)
    html = page_of(root)

    assert "no results.csv (the bench did not grade yet, or stopped before)" in html
    assert "no summary.json in this bench run" in html
    assert "not graded" in html
    assert len(task_block(html)["runs"]["ladder"]) == 1


def test_a_task_run_that_does_not_load_or_is_missing_is_shown_not_dropped(
    bench_run: Path, page_of: Any
):
    (bench_run / "tasks" / "general" / "mean_bug" / "ultra" / "0" / "run.json").write_text("{x")
    lost_row = ResultRow(
        task="general/lost_task",
        suite="general",
        contestant="ladder",
        contestant_kind="policy",
        attempt=0,
        outcome="harness_error",
    )
    with (bench_run / "results.csv").open("a") as f:
        f.write(csv_text([lost_row]).split("\n", 1)[1])
    html = page_of(bench_run)

    by_task = {b["task"]: b for b in blocks(html).values()}
    broken = by_task["general/mean_bug"]["runs"]["ultra"][0]
    assert "cannot read it as JSON" in broken["problem"]
    lost = by_task["general/lost_task"]
    assert "results.csv lists this task run" in lost["runs"]["ladder"][0]["problem"]
    assert "3 tasks, 2 contestants, 5 task runs" in html
    assert "2 (1 without a record)" in html  # the ultra row still counts it


def test_oracle_and_null_are_badged_built_in_not_scripted(tmp_path: Path, page_of: Any):
    html = page_of(write_bench(tmp_path / "b", oracle=True, null=True))
    data = task_block(html)

    assert data["runs"]["oracle"][0]["labels"] == ["built-in", "oracle"]
    assert data["runs"]["null"][0]["labels"] == ["built-in", "null"]
    assert data["runs"]["ladder"][0]["labels"] == []
    legend = html.split('<p class="legend">')[1].split("</p>")[0]
    assert (
        'oracle <span class="badge b-built-in">built-in</span> '
        '<span class="badge b-oracle">oracle</span>'
    ) in legend
    totals = html.split("<table class='totals'>")[1].split("</table>")[0]
    tasks = html.split("<table class='tasks'>")[1].split("</table>")[0]
    for view, badged in ((legend, 2), (totals, 2), (tasks, 4)):  # the tasks table: 2 tasks
        assert view.count('<span class="badge b-built-in">built-in</span>') == badged
        assert "b-scripted" not in view
    # They replay no script: the page does not call them scripted anywhere.
    assert "SCRIPTED" not in html and "[built-in, null]" in html  # the chart's tooltips


def test_a_bench_contestant_on_the_scripted_provider_stays_scripted(tmp_path: Path, page_of: Any):
    folder = tmp_path / "b" / "tasks" / "general" / "mean_bug" / "demo" / "0"
    write_run(folder, run_id="s", contestant="demo", bench_id="b", scripted=True,
              tags={"kind": "policy"})  # fmt: skip
    html = page_of(tmp_path / "b")

    assert task_block(html)["runs"]["demo"][0]["labels"] == ["scripted"]
    assert "SCRIPTED: these runs replay scripted replies" in html


def test_lone_runs_of_one_task_with_two_policies_sit_side_by_side(tmp_path: Path, page_of: Any):
    runs = tmp_path / "repo" / ".ssw" / "runs"
    write_run(runs / "a", run_id="a", policy_path="bench/policies/ladder.toml")
    write_run(
        runs / "b",
        run_id="b",
        policy_path="bench/policies/ultra.toml",
        started_at="2026-12-01T11:00:00+00:00",
    )
    write_run(
        runs / "c",
        run_id="c",
        policy_path="bench/policies/ladder.toml",
        started_at="2026-12-01T12:00:00+00:00",
    )
    html = page_of(tmp_path / "repo")  # a repository: its .ssw/runs

    data = task_block(html)
    assert data["contestants"] == ["ladder.toml", "ultra.toml"]
    assert [r["attempt"] for r in data["runs"]["ladder.toml"]] == [0, 1]
    assert "3 runs" in html


def test_a_record_with_a_secret_shaped_string_is_refused_and_no_page_is_written(tmp_path: Path):
    step = model_step(
        20, 9, "run", "small", text="export OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234"
    )
    folder = write_run(tmp_path / "r1", run_id="r1", extra_events=[step])

    with pytest.raises(UsageError, match="an API key"):
        build_site([folder], tmp_path / "site")
    assert not (tmp_path / "site" / "index.html").exists()


def test_a_page_that_mentions_the_home_folder_is_written_with_a_warning(tmp_path: Path):
    step = model_step(20, 9, "run", "small", text=f"ran in {Path.home()}/project")
    folder = write_run(tmp_path / "r1", run_id="r1", extra_events=[step])

    built = build_site([folder], tmp_path / "site")
    assert any(str(Path.home()) in w for w in built.warnings)
    assert built.page.is_file()


def test_a_large_run_embeds_each_task_as_its_own_block_opened_only_on_demand(
    tmp_path: Path, page_of: Any
):
    root = write_bench(tmp_path / "b", tasks=tuple(f"general/task{i:03}" for i in range(60)))
    html = page_of(root)

    assert len(blocks(html)) == 60
    assert "<text" in html and "task059" in html  # tooltips name every task
    assert html.count("class='cell o-done'") == 120


def test_ssw_site_build_on_the_committed_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(site_app, ["build", "--out", str(tmp_path / "site")])

    assert result.exit_code == 0, result.output
    page = f"page: {tmp_path / 'site' / 'index.html'} ("
    assert any(line.startswith(page) for line in result.output.splitlines())
    html = (tmp_path / "site" / "index.html").read_text()
    assert "SCRIPTED" in html and str(REPO) not in html
    assert "as if served by the Anthropic ladder" in html  # the committed runs are the demo's


def test_ssw_site_build_on_a_folder_without_runs_is_a_usage_error(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(
        site_app, ["build", str(tmp_path / "empty"), "--out", str(tmp_path / "site")]
    )

    assert result.exit_code != 0
    assert isinstance(result.exception, UsageError)
    assert "holds no run folder" in str(result.exception)


def test_model_steps_round_trip_through_the_page_unchanged(bench_run: Path, page_of: Any):
    html = page_of(bench_run)
    page_step = task_block(html)["runs"]["ladder"][0]["events"][0]
    recorded = load_run(bench_run / "tasks" / "general" / "mean_bug" / "ladder" / "0").steps[0]

    assert isinstance(recorded, ModelStep)
    shown = {k: v for k, v in page_step.items() if k not in ("cost_text", "tokens_text")}
    assert ModelStep.model_validate({**shown, "run_id": recorded.run_id}) == recorded
