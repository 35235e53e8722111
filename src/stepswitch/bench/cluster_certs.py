"""`ssw bench cluster-certs DIR`: a certificate authority and certificates for a Dask cluster's
scheduler, workers and client, so that a cluster asks who is calling (ADR 0049).

Made with the `openssl` command (the `cryptography` package is not among ssw's dependencies, and
Dask's own `Security.temporary()` needs it). Dask's TLS requires a certificate from the CA on
both ends of every connection, so a process without one cannot reach the scheduler. Any holder
of a certificate from this CA is trusted alike (Dask checks the CA, not the role): a worker's
certificate could connect as a client. The folder is made 0700, each key 0600.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from stepswitch.errors import UsageError

DAYS = 365
ROLES = ("scheduler", "worker", "client")
CA_FILE, CA_KEY = "ca.pem", "ca-key.pem"
OPENSSL_TIMEOUT_S = 60
# Dask checks the chain, not the host name; both uses, as each end is client and server.
# Our own request config, so the system's openssl.cnf adds nothing of its own.
_CONFIG = (
    "[req]\ndistinguished_name = dn\nx509_extensions = ca\n[dn]\n"
    "[ca]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
    "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid:always\n"
)
_LEAF = (
    "basicConstraints=critical,CA:FALSE\n"
    "keyUsage=critical,digitalSignature,keyEncipherment\n"
    "extendedKeyUsage=serverAuth,clientAuth\n"
    "subjectKeyIdentifier=hash\n"
    "authorityKeyIdentifier=keyid,issuer\n"
    "subjectAltName=DNS:ssw-bench-{role}\n"
)


@dataclass(frozen=True)
class ClusterCerts:
    """The files of a folder `ssw bench cluster-certs` wrote."""

    folder: Path

    @property
    def ca(self) -> Path:
        return self.folder / CA_FILE

    def cert(self, role: str) -> Path:
        return self.folder / f"{role}.pem"

    def key(self, role: str) -> Path:
        return self.folder / f"{role}-key.pem"

    def missing(self) -> list[str]:
        """The names of the files a client needs that are not there."""
        wanted = (self.ca, self.cert("client"), self.key("client"))
        return [p.name for p in wanted if not p.is_file()]


def _openssl(args: list[str], cwd: Path) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        raise UsageError("ssw bench cluster-certs needs the openssl command; install OpenSSL")
    done = subprocess.run(
        [openssl, *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=OPENSSL_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise UsageError(f"openssl {args[0]} failed: {last}")


def _new_key_and_request(role: str, where: Path) -> None:
    _openssl(
        ["req", "-config", "req.cnf", "-new", "-newkey", "ec", "-pkeyopt",
         "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", f"{role}-key.pem",
         "-out", f"{role}.csr", "-subj", f"/CN=ssw-bench-{role}"],
        where,
    )  # fmt: skip


def make_certs(folder: Path) -> ClusterCerts:
    """A new CA and a certificate and key per role in `folder` (new, or empty): made in a 0700
    folder beside it and moved into place whole, so no key is ever readable by others."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UsageError(f"{folder}: give a new or empty folder; certificates are never replaced")
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".ssw-certs-", dir=folder.parent))  # mode 0700
    try:
        (work / "req.cnf").write_text(_CONFIG, encoding="utf-8")
        _openssl(
            ["req", "-config", "req.cnf", "-x509", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", CA_KEY, "-out", CA_FILE,
             "-days", str(DAYS), "-subj", "/CN=ssw bench cluster CA"],
            work,
        )  # fmt: skip
        for role in ROLES:
            _new_key_and_request(role, work)
            (work / f"{role}.ext").write_text(_LEAF.format(role=role), encoding="utf-8")
            _openssl(
                ["x509", "-req", "-in", f"{role}.csr", "-CA", CA_FILE, "-CAkey", CA_KEY,
                 "-set_serial", str(int.from_bytes(os.urandom(16), "big") >> 1),
                 "-days", str(DAYS), "-extfile", f"{role}.ext", "-out", f"{role}.pem"],
                work,
            )  # fmt: skip
            (work / f"{role}.csr").unlink()
            (work / f"{role}.ext").unlink()
        (work / "req.cnf").unlink()
        for path in work.iterdir():
            path.chmod(0o600 if path.name.endswith("-key.pem") else 0o644)
        if folder.exists():
            folder.rmdir()  # empty, checked above
        work.rename(folder)
    except OSError as err:
        shutil.rmtree(work, ignore_errors=True)
        raise UsageError(f"{folder}: cannot write the certificates ({err.strerror})") from None
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return ClusterCerts(folder)


def start_lines(certs: ClusterCerts, host: str = "SCHEDULER-HOST", port: int = 8786) -> str:
    """The command lines that start a cluster with these certificates, and reach it."""
    folder = certs.folder.absolute()

    def tls(role: str) -> str:
        return (
            f"--tls-ca-file {folder / CA_FILE} --tls-cert {folder / f'{role}.pem'} "
            f"--tls-key {folder / f'{role}-key.pem'}"
        )

    address = f"tls://{host}:{port}"
    return (
        f"On the scheduler's machine:\n"
        f"  dask scheduler --protocol tls --port {port} --no-dashboard {tls('scheduler')}\n"
        f"On each worker's machine (copy {CA_FILE}, worker.pem and worker-key.pem there; no "
        f"provider key in its environment):\n"
        f"  dask worker {address} --nthreads 1 --no-dashboard {tls('worker')}\n"
        f"Here:\n"
        f"  ssw bench run ... --scheduler {address} --cluster-certs {folder}\n"
        f"Keep {CA_KEY} on this machine only: whoever holds it, or any certificate it signed, "
        f"can run code on the workers.\n"
    )
