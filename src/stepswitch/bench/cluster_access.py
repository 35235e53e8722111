"""Which schedulers `ssw bench run --scheduler` talks to, and with what credentials (ADR 0049).

Whoever can reach a Dask scheduler can run code on its workers and read what they hold, keys
included. So: `tls://HOST:PORT` with the certificates of `ssw bench cluster-certs DIR`
(`--cluster-certs DIR`), both ends proving they hold one from its CA; `tcp://` only to this
machine's loopback and only when the user says so (`--insecure-loopback-scheduler`), since any
local process can reach it then; anything else refused before any connection is tried.
"""

from __future__ import annotations

import importlib
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepswitch.bench.cluster_certs import ClusterCerts
from stepswitch.errors import UsageError

INSECURE_FLAG = "--insecure-loopback-scheduler"
CERTS_FLAG = "--cluster-certs"
INSECURE_NOTICE = (
    "ssw: --insecure-loopback-scheduler: the scheduler speaks plain TCP without credentials; "
    "any process on this machine can run code on its workers and read what they hold, the "
    "provider keys of the task runs included"
)
_FIX = "use tls:// with certificates (ssw bench cluster-certs DIR, then --cluster-certs DIR)"


@dataclass(frozen=True)
class SchedulerAccess:
    """A scheduler address that may be reached, and how."""

    address: str
    certs: ClusterCerts | None  # None: plain TCP on loopback, as the user allowed

    def security(self) -> Any:
        """Dask's Security for this address: TLS required, this client's certificate shown."""
        security: Any = importlib.import_module("distributed.security").Security
        if self.certs is None:
            return security()
        return security(
            require_encryption=True,
            tls_ca_file=str(self.certs.ca),
            tls_client_cert=str(self.certs.cert("client")),
            tls_client_key=str(self.certs.key("client")),
        )


def _host(address: str, rest: str) -> str:
    hostport = rest.split("/", 1)[0]
    if hostport.startswith("["):  # [::1]:8786
        host, _, port = hostport[1:].partition("]")
        port = port.removeprefix(":")
    else:
        host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--scheduler {address!r}: give the scheduler's address, tls://HOST:PORT")
    return host


def is_loopback(host: str) -> bool:
    """Whether host is this machine's loopback by its literal form ("localhost" included)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def scheduler_access(
    address: str, certs: Path | None, *, insecure_loopback: bool = False
) -> SchedulerAccess:
    """The address checked, before anything connects; a one-line UsageError naming the fix."""
    scheme, sep, rest = address.partition("://")
    if not sep or scheme not in ("tls", "tcp"):
        raise UsageError(f"--scheduler {address!r}: give the scheduler's address, tls://HOST:PORT")
    host = _host(address, rest)
    if scheme == "tcp":
        if not is_loopback(host):
            raise UsageError(
                f"--scheduler {address}: plain tcp:// lets anyone who reaches {host} run code "
                f"on the workers and read the keys; {_FIX}"
            )
        if not insecure_loopback:
            raise UsageError(
                f"--scheduler {address}: plain tcp:// lets any process on this machine run code "
                f"on the workers and read the keys; {_FIX}, or accept that with {INSECURE_FLAG}"
            )
        if certs is not None:
            raise UsageError(f"{CERTS_FLAG} is for a tls:// scheduler, not {address}")
        return SchedulerAccess(address, None)
    if certs is None:
        raise UsageError(
            f"--scheduler {address}: name the certificates with {CERTS_FLAG} DIR "
            "(made by ssw bench cluster-certs DIR)"
        )
    found = ClusterCerts(certs)
    if missing := found.missing():
        raise UsageError(
            f"{CERTS_FLAG} {certs}: no {', '.join(missing)} (make them with ssw bench "
            "cluster-certs DIR)"
        )
    return SchedulerAccess(address, found)
