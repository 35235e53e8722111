"""The tally: a small file beside the ledger (`ledger.sqlite.tally`) that counts the writes
SQLite said were committed, so an open can tell a ledger that lost committed writes (a damaged
or removed -wal, a file restored from an older copy, a file emptied or deleted) from one that
is whole. SQLite cannot: a -wal whose last frames are damaged is read up to the damage, without
a word. See ADR 0024 for what it can and cannot see."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from stepswitch.ledger import proc
from stepswitch.ledger.meta import Meta
from stepswitch.ledger.store import LedgerError
from stepswitch.util.config_model import first_error

RECORD_BYTES = 256  # one record rewritten in place, inside one sector: old or new after a crash
SUFFIX = ".tally"


class Tally(BaseModel):
    """writes: the highest write count any process saw committed; durable: the highest one
    committed with an fsync (a settlement, or a reservation of no dollars, is not fsynced: a
    power loss may take it back, ADR 0074)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: Literal["stepswitch-ledger-tally/1"] = "stepswitch-ledger-tally/1"
    ledger_id: str
    writes: int
    durable: int
    boot_id: str | None  # the boot of the last write: a later boot may have lost unsynced ones


def tally_path(ledger: Path) -> Path:
    return ledger.with_name(ledger.name + SUFFIX)


def ever_made(ledger: Path) -> bool:
    """The ledger is there, or its tally is: one was made at this path (it may be lost since)."""
    return ledger.exists() or tally_path(ledger).exists()


def _parse(path: Path, data: bytes) -> Tally:
    if not data.strip():
        # A tally is linked into place with its first record (TallyWriter), so an empty one was
        # emptied afterwards: taking it as "none yet" would skip the check it exists for.
        raise LedgerError(
            path,
            "the ledger's tally is empty, so it was emptied after it was written; nothing was "
            "changed",
            f"restore it from a copy; to accept the ledger as it is, remove {path.name}",
        )
    try:
        return Tally.model_validate_json(data.strip())
    except ValidationError as exc:
        raise LedgerError(
            path,
            f"the ledger's tally cannot be read ({first_error(exc)['msg']}); nothing was changed",
            f"if it was damaged, remove {path.name} (the ledger then opens without that check "
            "once, and a new tally starts)",
        ) from exc


def read_tally(ledger: Path) -> Tally | None:
    """The tally, read under a shared lock (works on a read-only mount); None when absent."""
    path = tally_path(ledger)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LedgerError(
            ledger, f"cannot read its tally {path.name} ({exc})", "make it readable"
        ) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        data = os.pread(fd, RECORD_BYTES * 2, 0)
    finally:
        os.close(fd)
    return _parse(path, data)


def _lost(ledger: Path, tally: Tally, holds: int) -> LedgerError:
    name = tally_path(ledger).name
    return LedgerError(
        ledger,
        f"has lost committed writes: its tally {name} counted {tally.writes} write(s) committed "
        f"to it, the file (with its -wal) holds {holds}, so the latest calls' rows are gone (a "
        "damaged or removed -wal, or a file restored from an older copy); nothing was changed",
        f"restore the ledger and its -wal from a copy; to accept the file as it is, remove {name}",
    )


def judge(ledger: Path, tally: Tally | None, meta: Meta | None) -> None:
    """Raise when the file holds fewer writes than the tally saw committed, or is another file."""
    if tally is None:
        return  # nothing to compare with: an earlier version's ledger, or a copy (ADR 0024)
    name = tally_path(ledger).name
    if meta is None or meta.ledger_id != tally.ledger_id:
        said = "has no ledger id" if meta is None else f"is ledger {meta.ledger_id[:12]}"
        raise LedgerError(
            ledger,
            f"is not the ledger its tally {name} counted (ledger {tally.ledger_id[:12]}, "
            f"{tally.writes} write(s)): this file {said}, so it was replaced or restored from "
            "an older copy; nothing was changed",
            f"put the original back, or remove {name} to take this file as the ledger",
        )
    if meta.writes >= tally.writes:
        return
    if meta.writes >= tally.durable:
        # Only unsynced settlements are missing. After a restart a power loss explains that
        # (their reservations stand and are recovered as bounds); in the same boot nothing does.
        now = proc.boot_id()
        if now is not None and tally.boot_id is not None and now != tally.boot_id:
            return
    raise _lost(ledger, tally, meta.writes)


def refuse_lost_file(ledger: Path) -> None:
    """A missing ledger is made only where none was: a tally (or a -wal) says one was."""
    tally = read_tally(ledger)
    wal = ledger.with_name(ledger.name + "-wal")
    if (tally is None and not wal.exists()) or ledger.exists():
        return  # none was here, or another process has just made it (it links, then tallies)
    name = tally_path(ledger).name
    what = (
        f"its tally {name} counted {tally.writes} write(s) to a ledger here"
        if tally is not None
        else f"its -wal {wal.name} is still here"
    )
    raise LedgerError(
        ledger,
        f"is missing, but {what}: its spend record was lost, so no new ledger was made",
        f"restore it from a copy; to start a new, empty ledger, move {name} and any "
        f"{ledger.name}-wal/-shm aside",
    )


def _encode(tally: Tally) -> bytes:
    return tally.model_dump_json().encode().ljust(RECORD_BYTES - 1) + b"\n"


class TallyWriter:
    """Raises the tally after each committed write: monotonic across processes (flock)."""

    def __init__(self, ledger: Path) -> None:
        self.ledger = ledger
        self.path = tally_path(ledger)
        self._boot = proc.boot_id()
        self._fd = -1
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            pass  # made, with its first record, by the first `record`
        except OSError as exc:
            raise self._unwritable(exc) from exc

    def _unwritable(self, exc: OSError) -> LedgerError:
        return LedgerError(
            self.ledger,
            f"cannot write its tally {self.path.name} ({exc})",
            "free disk space or make the ledger's folder writable",
        )

    def _create(self, first: Tally) -> bool:
        """Link a file holding `first` into place, so no reader ever sees an empty tally.
        False when another process made it first (it is then opened, to be merged into)."""
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.new")
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            os.pwrite(fd, _encode(first), 0)
            os.fsync(fd)
            os.link(tmp, self.path)
        except FileExistsError:
            os.close(fd)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CLOEXEC)
            return False
        except BaseException:
            os.close(fd)
            raise
        finally:
            tmp.unlink(missing_ok=True)
        self._fd = fd
        return True

    def record(self, ledger_id: str, writes: int, durable: bool) -> None:
        try:
            first = self._fd < 0 and self._create(self._next(None, ledger_id, writes, durable))
            if first:
                return
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                self._merge(ledger_id, writes, durable)
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        except OSError as exc:
            raise self._unwritable(exc) from exc

    def _next(self, old: Tally | None, ledger_id: str, writes: int, durable: bool) -> Tally:
        return Tally(
            ledger_id=ledger_id,
            writes=max(writes, old.writes if old else 0),
            durable=max(writes if durable else 0, old.durable if old else 0),
            boot_id=self._boot,
        )

    def _merge(self, ledger_id: str, writes: int, durable: bool) -> None:
        data = os.pread(self._fd, RECORD_BYTES * 2, 0)
        old = _parse(self.path, data)
        if old.ledger_id != ledger_id:
            raise LedgerError(
                self.ledger,
                f"its tally {self.path.name} now names another ledger: the file was replaced "
                "while this process had it open",
                "stop the other process that made a ledger here, then restore the original",
            )
        new = self._next(old, ledger_id, writes, durable)
        if new != old:
            os.pwrite(self._fd, _encode(new), 0)

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1  # closing twice (a ledger closed, then its block ends)
            os.close(fd)
