"""Model text holding bidi overrides and C1 controls is recorded in steps.jsonl and run.json as
`\\u` escapes: the files' bytes hold no raw one (`cat` or `less` on them cannot reorder a line or
drive the terminal), and the text loads back exactly as the model sent it."""

from __future__ import annotations

import json
from pathlib import Path

from stepswitch.records.folder import load_run
from tests.harness.repo import sample_repo
from tests.harness.task import approve_and_summarize, done, explore, fix_the_bug, run_ssw

# RIGHT-TO-LEFT OVERRIDE reverses what follows; U+009B is CSI to a terminal that takes C1;
# U+0085 and U+2028 end a line for str.splitlines.
HOSTILE = "plan \u202eevil\u202c then \u009b2J and \u2066isolated\u2069 \x85 \u2028 \x7f"
RAW = ["\u202e", "\u202c", "\u009b", "\u2066", "\u2069", "\x85", "\u2028", "\x7f"]


def test_a_model_steps_bidi_and_c1_controls_are_escaped_in_the_files_and_load_back_equal(
    tmp_path: Path,
):
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    first = {**done(HOSTILE), "content": HOSTILE}  # the answer's text and its tool call's
    replies = [first, *explore()[1:], *fix_the_bug(), *approve_and_summarize()]

    run = run_ssw(tmp_path, repo, replies)

    step = run.model_steps[0]
    assert step.text == HOSTILE  # loaded back as sent
    assert json.loads(step.tool_calls[0].arguments)["summary"] == HOSTILE
    for name in ("steps.jsonl", "run.json"):
        data = (run.folder / name).read_bytes().decode("utf-8")
        assert not [c for c in RAW if c in data], name
    written = (run.folder / "steps.jsonl").read_text(encoding="utf-8")
    assert "\\u202e" in written and "\\u009b" in written  # the control: the text is in the file


def test_a_steps_file_written_before_with_raw_line_separators_in_a_string_still_loads(
    tmp_path: Path,
):
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    first = {**done(HOSTILE), "content": HOSTILE}
    run = run_ssw(tmp_path, repo, [first, *explore()[1:], *fix_the_bug(), *approve_and_summarize()])
    steps = run.folder / "steps.jsonl"
    lines = steps.read_text(encoding="utf-8").split("\n")
    raw = [json.dumps(json.loads(ln), ensure_ascii=False) for ln in lines if ln]
    steps.write_text("\n".join(raw) + "\n", encoding="utf-8")  # as ssw wrote it before
    assert "\x85" in steps.read_text(encoding="utf-8")

    assert load_run(run.folder).model_steps[0].text == HOSTILE
