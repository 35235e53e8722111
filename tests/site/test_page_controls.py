"""Model text with bidi overrides and C1 controls is shown on the replay page as escapes, as ssw's
printed output shows it: the page's bytes hold no raw one, so the browser cannot reorder a line
of a step's text or of the task's name."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from stepswitch.records.folder import load_run
from stepswitch.site.shown import shown, shown_json

from .conftest import model_step, write_run

BLOCK = re.compile(r'<script type="application/json" id="([^"]+)">(.*?)</script>', re.S)
# "evil" written backwards after U+202E reads "live"; U+009B is CSI to a terminal.
HOSTILE = "approve \u202elive\u202c \u009b \u2066x\u2069"
RAW = ["\u202e", "\u202c", "\u009b", "\u2066", "\u2069"]


def test_bidi_and_c1_controls_in_a_record_are_shown_as_escapes_on_the_page(
    tmp_path: Path, page_of: Any
):
    step = model_step(20, 9, "review", "small", text=HOSTILE)
    folder = write_run(tmp_path / "r1", run_id="r1", task=HOSTILE, extra_events=[step])
    assert HOSTILE in [s.text for s in load_run(folder).model_steps]  # recorded as sent

    html = page_of(folder)

    assert not [c for c in RAW if c in html]
    shown = "approve \\u202elive\\u202c \\x9b \\u2066x\\u2069"
    texts = [
        event.get("text")
        for match in BLOCK.finditer(html)
        for runs in json.loads(match.group(2)).get("runs", {}).values()
        for run in runs
        for event in run["events"]
    ]
    assert shown in texts  # the text is on the page, as its escapes
    assert "approve \\u202elive" in BLOCK.sub("", html)  # the task's name in the tables too


@pytest.mark.parametrize(
    "value",
    [
        {"text": "plain words", "n": [1, 2.5, None, True], "t": ("a", "b")},
        {"events": [{"text": "red \x1b[31m then \b back"}]},  # C0, deep in a list
        {"a\u202eb": "a key with an override"},
        {"lines": "one\r\ntwo\rthree\tfour\nfive"},  # CR LF, a lone CR, tab and newline
        {"broken": "half a pair \ud800 here", "del": "\x7f"},
        {"path": "C:\\build\\file", "u": "\\u0041 typed"},  # backslashes, no control
    ],
    ids=["none", "c0", "key", "line-ends", "surrogate", "backslashes"],
)
def test_a_records_json_block_shows_every_control_escaped_as_the_walk_over_it_does(value: Any):
    expected = json.dumps(shown(value), ensure_ascii=False, separators=(",", ":"))
    assert shown_json(value) == expected
