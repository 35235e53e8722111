"""While a step runs, `ssw run` says what runs now: on a terminal one status line (the step, its
model, the tool call, the elapsed time) redrawn in place under the finished lines; elsewhere the
tool calls and the gates' start as plain lines, with no terminal codes."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from stepswitch.agent.events import Progress
from stepswitch.cli.live import CLEAR, LiveLine
from stepswitch.records.steps import ModelStep
from tests.harness.cli import run_on_terminal, ssw_env


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _step() -> ModelStep:
    return ModelStep(
        run_id="r", seq=1, step=1, step_type="edit", worker="mid", provider="p", model="m"
    )


def test_the_status_line_names_the_step_its_tool_call_and_the_time_since_it_began(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the whole line fits
    stream, clock = io.StringIO(), Clock()
    live = LiveLine(stream, clock)
    try:
        assert live.status() == ""
        live.on_event(Progress("step", "step 3 edit mid (vendor/model-m)"))
        clock.now += 12
        live.on_event(Progress("tool", 'run {"command": "pytest -q"}'))
        status = "  … step 3 edit mid (vendor/model-m) 12 s · $0.0000 spent · "
        status += 'run {"command": "pytest -q"}'
        assert live.status() == status
        live.print_line("a finished line")
        # The line goes above the status: cleared first, printed, the status drawn again.
        assert stream.getvalue().endswith(f"{CLEAR}a finished line\n{status}")
        live.on_event(_step())  # the step's own line follows: nothing is under way
        assert live.status() == ""
    finally:
        live.close()
    assert stream.getvalue().endswith(CLEAR)  # nothing left on the terminal's last line


def test_the_status_line_holds_no_control_character_from_the_model() -> None:
    stream = io.StringIO()
    live = LiveLine(stream, Clock())
    try:
        live.on_event(Progress("step", "step 1 edit mid (m)"))
        live.on_event(Progress("tool", 'run {"command": "x\x1b]0;owned\x07\ny"}'))
        drawn = stream.getvalue().split(CLEAR)[-1]
        assert "\x1b" not in drawn and "\x07" not in drawn and "\n" not in drawn
    finally:
        live.close()


@pytest.mark.slow
def test_ssw_demo_on_a_terminal_redraws_one_status_line_and_in_a_pipe_prints_plain_lines(
    tmp_path: Path,
) -> None:
    env = ssw_env(COLUMNS="200")
    command = [sys.executable, "-m", "stepswitch", "demo", "--sandbox", "none", "--dir"]
    code, on_tty = run_on_terminal([*command, str(tmp_path / "tty")], env)
    assert code == 0, on_tty
    assert "\r\x1b[K  … step 1 plan large (scripted-large)" in on_tty
    assert "\r\x1b[K  … gates tests" in on_tty
    assert " · read {" in on_tty  # the tool call a step is in
    assert "      > " not in on_tty  # no plain progress lines on a terminal

    piped = subprocess.run(
        [*command, str(tmp_path / "pipe")], capture_output=True, text=True, env=env, timeout=120
    )
    assert piped.returncode == 0, piped.stderr
    assert "\x1b" not in piped.stdout
    assert '      > read {"path": "textstats/stats.py"}' in piped.stdout.splitlines()
    assert "      > gates tests" in piped.stdout.splitlines()
