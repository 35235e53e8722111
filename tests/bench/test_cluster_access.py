"""A cluster that asks who is calling (issue 40, ADR 0049): `--scheduler tls://` with the
certificates `ssw bench cluster-certs` makes; a client without them is turned away by the
scheduler; plain `tcp://` is refused before any connection unless it is this machine's loopback
and the user passed the flag that says what that exposes. Keys travel with each task run and
print as their names only."""

from __future__ import annotations

import socket
import ssl
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stepswitch.bench.cluster_access import INSECURE_FLAG, INSECURE_NOTICE, scheduler_access
from stepswitch.bench.cluster_certs import ClusterCerts, make_certs
from stepswitch.bench.cluster_keys import TaskRunKeys
from stepswitch.bench.plan import RunKey
from stepswitch.bench.travel import RemoteJob, TaskFiles, TravellingContestant
from stepswitch.cli import bench_cluster
from stepswitch.errors import UsageError
from tests.harness.cli import run_ssw_cli

distributed = pytest.importorskip("distributed")

from stepswitch.bench import cluster  # noqa: E402  (after the skip: it needs distributed)

REPO = Path(__file__).resolve().parents[2]
TASK = REPO / "bench/suites/general/paginate-last-page"


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> ClusterCerts:
    return make_certs(tmp_path_factory.mktemp("cluster") / "certs")


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A port on loopback that records whether anything connected to it."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        yield server


def _nobody_connected(server: socket.socket) -> bool:
    try:
        server.accept()[0].close()
    except BlockingIOError:
        return True
    return False


def test_cluster_certs_writes_keys_only_the_user_can_read_and_prints_the_start_lines(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "certs"
    result = run_ssw_cli(["bench", "cluster-certs", str(folder), "--host", "10.0.0.5"])

    assert result.returncode == 0, result.stderr
    assert "dask scheduler --protocol tls --port 8786 --no-dashboard --tls-ca-file" in result.stdout
    worker = f"dask worker tls://10.0.0.5:8786 --nthreads 1 --no-dashboard --tls-ca-file {folder}"
    assert worker in result.stdout
    assert f"--scheduler tls://10.0.0.5:8786 --cluster-certs {folder}" in result.stdout
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    assert {name for name, mode in modes.items() if mode == 0o600} == {
        "ca-key.pem", "scheduler-key.pem", "worker-key.pem", "client-key.pem",
    }  # fmt: skip
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    again = run_ssw_cli(["bench", "cluster-certs", str(folder)])
    assert again.returncode == 2 and "certificates are never replaced" in again.stderr


def test_a_tcp_scheduler_elsewhere_is_refused_before_anything_connects(
    tmp_path: Path, listener: socket.socket
) -> None:
    port = listener.getsockname()[1]
    address = f"tcp://0.0.0.0:{port}"  # on Linux this reaches the listener on 127.0.0.1
    with pytest.raises(UsageError, match=r"lets anyone who reaches 0\.0\.0\.0 run code"):
        scheduler_access(address, None, insecure_loopback=True)
    command = ["bench", "run", "--suite", str(TASK), "--contestant", "oracle"]
    result = run_ssw_cli([*command, "--scheduler", address, "--out", str(tmp_path / "b")])

    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "use tls:// with certificates (ssw bench cluster-certs DIR" in result.stderr
    assert _nobody_connected(listener)
    with socket.create_connection(("0.0.0.0", port), timeout=5):  # control: it was reachable
        assert not _nobody_connected(listener)


def test_a_loopback_tcp_scheduler_needs_the_flag_that_says_what_it_exposes(
    tmp_path: Path, listener: socket.socket, capsys: pytest.CaptureFixture[str]
) -> None:
    address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    command = ["bench", "run", "--suite", str(TASK), "--contestant", "oracle"]
    refused = run_ssw_cli([*command, "--scheduler", address, "--out", str(tmp_path / "b")])
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "lets any process on this machine run code on the workers and read the keys" in (
        refused.stderr
    )
    assert INSECURE_FLAG in refused.stderr and _nobody_connected(listener)

    access = bench_cluster.scheduler_access(address, None, True)

    assert access is not None and access.address == address and access.certs is None
    assert capsys.readouterr().err == INSECURE_NOTICE + "\n"


def test_a_tls_scheduler_needs_the_certificates_named(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="name the certificates with --cluster-certs DIR"):
        scheduler_access("tls://10.0.0.5:8786", None)
    with pytest.raises(UsageError, match=r"no ca\.pem, client\.pem, client-key\.pem"):
        scheduler_access("tls://10.0.0.5:8786", tmp_path)
    with pytest.raises(UsageError, match="give the scheduler's address, tls://HOST:PORT"):
        scheduler_access("10.0.0.5:8786", None)
    with pytest.raises(UsageError, match="go with --scheduler"):
        bench_cluster.scheduler_access(None, tmp_path, False)


def _tls_cluster(certs: ClusterCerts) -> Any:
    security = distributed.security.Security(
        require_encryption=True,
        tls_ca_file=str(certs.ca),
        **{
            f"tls_{role}_{part}": str(certs.cert(role) if part == "cert" else certs.key(role))
            for role in ("scheduler", "worker", "client")
            for part in ("cert", "key")
        },
    )
    return distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        protocol="tls://",
        security=security,
        dashboard_address=None,
        silence_logs=40,
    )


def _turned_away(host: str, port: int, context: ssl.SSLContext) -> bool:
    """Whether the scheduler ends a TLS connection that shows no certificate of its CA."""
    with socket.create_connection((host, port), timeout=30) as raw:
        try:
            with context.wrap_socket(raw) as tls:
                tls.settimeout(30)
                return tls.recv(1) == b""
        except (ssl.SSLError, ConnectionError):
            return True


@pytest.mark.slow
def test_a_tls_cluster_takes_a_client_with_its_certificates_and_turns_every_other_away(
    certs: ClusterCerts, tmp_path: Path
) -> None:
    stranger = make_certs(tmp_path / "stranger")  # a CA of its own
    with _tls_cluster(certs) as lc:
        address = lc.scheduler_address
        assert address.startswith("tls://127.0.0.1:")
        client = cluster.connect(scheduler_access(address, certs.folder))
        try:
            assert cluster.worker_threads(client) == 1
        finally:
            client.close()
        with pytest.raises(UsageError, match="cannot reach the scheduler"):
            cluster.connect(scheduler_access(address, stranger.folder))
        host, port = address.removeprefix("tls://").split(":")
        no_cert = ssl.create_default_context(cafile=str(certs.ca))
        no_cert.check_hostname = False
        assert _turned_away(host, int(port), no_cert)
        with pytest.raises(OSError):  # plain TCP, Dask's own client without TLS
            distributed.Client(address.replace("tls://", "tcp://"), timeout=10)


def test_a_task_runs_keys_travel_with_it_and_print_as_their_names_only() -> None:
    keys = TaskRunKeys({"NEBIUS_API_KEY": "sk-secret-value-123"})
    job = RemoteJob(
        token="t",
        bench_id="b",
        key=RunKey("general/x", "o", 0),
        task=TaskFiles.of(TASK, "general"),
        contestant=TravellingContestant.of(cluster.BuiltinContestant("oracle")),
        sandbox="auto",
        network=False,
        identity="ssw",
        keys=keys,
    )
    shown = f"{job!r} {job.keys!r} {job.keys} {[job.keys]}"
    assert "sk-secret-value-123" not in shown and "NEBIUS_API_KEY" in shown
    assert TaskRunKeys.from_line(keys.as_line()) == keys
    assert "\t" not in keys.as_line() and "\n" not in keys.as_line()
