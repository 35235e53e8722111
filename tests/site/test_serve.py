"""The dashboard over real HTTP on 127.0.0.1: runs in progress and past, the ledger report, the
replay of a run; read-only, loopback only, and a broken ledger is a message, not a crash."""

from __future__ import annotations

import http.client
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from stepswitch.cli.site import host_warning, serve_command
from stepswitch.errors import UsageError
from stepswitch.site.serve import DashboardServer, start_dashboard

from .conftest import DemoRun, write_bench, write_run


def get(server: DashboardServer, path: str, method: str = "GET", host: str | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
    try:
        headers = {"Host": host} if host else {}
        conn.request(method, path, headers=headers)
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8"), dict(response.getheaders())
    finally:
        conn.close()


@pytest.fixture
def runs(tmp_path: Path, demo_run: DemoRun) -> Path:
    """A runs folder: the demo run, a run still going, and a bench run."""
    folder = tmp_path / "runs"
    shutil.copytree(demo_run.folder, folder / demo_run.record.run_id)
    write_run(folder / "20261201-120000-live", run_id="20261201-120000-live", outcome="running")
    write_bench(folder / "bench1")
    return folder


@pytest.fixture
def server(runs: Path, demo_run: DemoRun) -> Iterator[DashboardServer]:
    running = start_dashboard(runs, demo_run.repo / ".ssw" / "ledger.sqlite", "127.0.0.1", 0)
    yield running
    running.shutdown()
    running.server_close()


def test_the_dashboard_lists_runs_in_progress_and_past_runs(
    server: DashboardServer, demo_run: DemoRun
):
    status, html, _ = get(server, "/")

    assert status == 200
    live = html.split("id='live'")[1].split("id='past'")[0]
    past = html.split("id='past'")[1].split("id='ledger'")[0]
    assert "20261201-120000-live" in live and "running" in live
    assert "$0.0030" in live and "2</td>" in live  # what its recorded steps cost so far
    assert demo_run.record.run_id in past and "bench1" in past
    assert '<span class="badge b-scripted">scripted</span>' in past
    assert 'data-refresh="3"' in html  # refreshes while something runs


def test_the_dashboard_shows_the_ledger_by_model_step_type_task_and_tag(
    server: DashboardServer, demo_run: DemoRun
):
    _, by_model, _ = get(server, "/")
    _, by_step, _ = get(server, "/?by=step_type")
    _, by_task, _ = get(server, "/?by=task")
    _, by_tag, _ = get(server, "/?by=tag")

    assert "<td>scripted scripted-small</td><td>5</td>" in by_model
    assert "<td>plan</td><td>1</td>" in by_step and "<td>review</td><td>2</td>" in by_step
    assert f"<td>{demo_run.record.run_id}</td><td>12</td>" in by_task
    assert "<td>(untagged)</td><td>12</td>" in by_tag
    assert "<td>total</td><td>12</td>" in by_model


def test_the_replay_of_a_run_and_of_a_bench_is_the_page(server: DashboardServer, demo_run: DemoRun):
    status, page, headers = get(server, f"/replay/{demo_run.record.run_id}")
    _, bench, _ = get(server, "/replay/bench1")
    _, live, _ = get(server, "/replay/20261201-120000-live")

    assert status == 200 and "SCRIPTED" in page and 'id="d-b0-t0"' in page
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert "bench run bench1" in bench and "mean_bug" in bench
    assert 'data-refresh="3"' in live and "<body data-refresh" not in page


def test_a_missing_or_corrupt_ledger_is_a_message_on_the_page(tmp_path: Path, runs: Path):
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"this is not a database" * 100)
    for ledger, said in ((tmp_path / "none.sqlite", "no ledger at this path"), (corrupt, "ledger")):
        server = start_dashboard(runs, ledger, "127.0.0.1", 0)
        try:
            status, html, _ = get(server, "/")
        finally:
            server.shutdown()
            server.server_close()
        assert status == 200
        box = html.split("<p class='error-box'>")[1]
        assert said in box and str(ledger) in box
    assert corrupt.read_bytes() == b"this is not a database" * 100


def test_a_missing_runs_folder_is_a_message_on_the_page(tmp_path: Path):
    server = start_dashboard(tmp_path / "nowhere", tmp_path / "l.sqlite", "127.0.0.1", 0)
    try:
        status, html, _ = get(server, "/")
    finally:
        server.shutdown()
        server.server_close()
    assert status == 200 and "no runs folder at" in html


def test_the_dashboard_is_read_only(server: DashboardServer, runs: Path):
    before = {p: p.stat().st_mtime_ns for p in runs.rglob("*")}
    answers = [get(server, "/", method=m)[0] for m in ("POST", "PUT", "DELETE", "PATCH")]
    get(server, "/")

    assert answers == [501, 501, 501, 501]
    assert {p: p.stat().st_mtime_ns for p in runs.rglob("*")} == before


def test_it_answers_only_to_loopback_names(server: DashboardServer):
    port = server.server_address[1]
    assert get(server, "/", host=f"localhost:{port}")[0] == 200
    assert get(server, "/", host=f"rebound.example:{port}")[0] == 403


def test_unknown_paths_and_paths_outside_the_runs_folder_are_not_found(server: DashboardServer):
    for path in ("/nope", "/replay/nope", "/replay/../../etc/passwd", "/replay/%2e%2e/runs"):
        assert get(server, path)[0] == 404


def test_it_binds_to_loopback_by_default_and_a_port_in_use_is_a_usage_error(
    server: DashboardServer, tmp_path: Path
):
    assert server.server_address[0] == "127.0.0.1"
    with pytest.raises(UsageError, match="is in use; pass --port N"):
        start_dashboard(tmp_path, tmp_path / "l.sqlite", "127.0.0.1", server.server_address[1])


def test_ssw_serve_warns_before_listening_beyond_loopback():
    assert host_warning("127.0.0.1") is None
    assert "anyone who can reach this machine" in (host_warning("0.0.0.0") or "")


def test_ssw_serve_on_a_port_in_use_is_a_usage_error(tmp_path: Path):
    app = typer.Typer()
    app.command()(serve_command)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = CliRunner().invoke(app, ["--port", port, "--runs", str(tmp_path)])

    assert isinstance(result.exception, UsageError)
    assert f"port {port} on 127.0.0.1 is in use" in str(result.exception)
