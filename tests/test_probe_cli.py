"""`ssw probe` as a real process against a loopback server: each check's line as it ends, and
--timeout as each call's limit."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from stepswitch.wire.probe_report import ProbeReport
from tests.test_cli import FAKE_PRESET
from tests.test_probe import make_server


def _registry(tmp_path: Path, url: str) -> Path:
    root = tmp_path / "registry"
    (root / "providers").mkdir(parents=True)
    (root / "providers" / "fake.toml").write_text(FAKE_PRESET.format(url=url))
    return root


def _probe(tmp_path: Path, url: str, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["SSW_REGISTRY"] = str(_registry(tmp_path, url))
    out = str(tmp_path / "out")
    return subprocess.Popen(
        [sys.executable, "-m", "stepswitch", "probe", "fake", "org/model-1", "--out", out, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_each_checks_line_is_printed_while_the_next_check_still_waits(tmp_path: Path):
    capable = make_server()
    released = threading.Event()

    def json_schema_waits(request: RecordedRequest) -> Reply:
        if "response_format" in request.json():
            released.wait(60)  # until the test has read the lines before it
        return capable(request)

    with LoopbackServer(json_schema_waits) as server:
        probe = _probe(tmp_path, server.base_url, "--timeout", "30")
        assert probe.stdout is not None
        try:
            early = [probe.stdout.readline() for _ in range(4)]  # head, columns, two checks
        finally:
            released.set()
        rest, err = probe.communicate(timeout=60)

    assert [line.split()[0] for line in early[2:]] == ["tool_call", "parallel_tool_calls"], early
    # json_schema answered after its wait, so the two lines came before the probe ended.
    [schema] = [line for line in rest.splitlines() if line.startswith("json_schema ")]
    assert schema.split()[1] == "yes", rest + err
    assert probe.returncode == 0, rest + err


def test_a_check_slower_than_timeout_is_left_unknown_naming_that_limit(tmp_path: Path):
    capable = make_server()
    stop = threading.Event()

    def json_schema_never_answers(request: RecordedRequest) -> Reply:
        if "response_format" in request.json():
            stop.wait(60)
        return capable(request)

    with LoopbackServer(json_schema_never_answers) as server:
        probe = _probe(tmp_path, server.base_url, "--timeout", "0.5")
        try:
            out, err = probe.communicate(timeout=120)
        finally:
            stop.set()

    [schema] = [line for line in out.splitlines() if line.startswith("json_schema ")]
    assert schema.split()[1] == "-", out + err  # unknown: a timeout says nothing of the model
    written = ProbeReport.model_validate_json(
        (tmp_path / "out" / "probes" / "fake" / "org__model-1.json").read_text()
    )
    assert "timeout of 0.5 s" in written.result("json_schema").detail
    assert [line.split()[1] for line in out.splitlines() if line.startswith("tool_call ")] == [
        "yes"
    ]
    assert "unknown after transient errors (429, 5xx, timeouts): json_schema" in out
