"""The ledger file: SQLite in WAL mode, one row per provider attempt, a versioned schema.

Opening (ledger.opening) never recreates, truncates or deletes an existing file: anything
unexpected is a one-line LedgerError naming the path and the fix.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from stepswitch.errors import UsageError
from stepswitch.records.money import format_usd
from stepswitch.wire.served import same_model

SCHEMA_VERSION = 4
DEFAULT_PATH = Path(".ssw/ledger.sqlite")
BUSY_TIMEOUT_S = 10.0

Status = Literal["reserved", "settled", "error", "not_sent", "bound"]

# Version n is reached by running MIGRATIONS[n] on a file at version n - 1 (1 = a new file).
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            status TEXT NOT NULL CHECK (status IN
                ('reserved', 'settled', 'error', 'not_sent', 'bound')),
            run_id TEXT NOT NULL,
            task_id TEXT NOT NULL,
            bench_id TEXT,
            step INTEGER NOT NULL,
            step_type TEXT NOT NULL,
            worker TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            attempt INTEGER NOT NULL,
            tags TEXT NOT NULL DEFAULT '{}',
            priced INTEGER NOT NULL,
            price TEXT,
            prompt_bytes INTEGER NOT NULL,
            est_prompt_tokens INTEGER NOT NULL,
            max_output_tokens INTEGER NOT NULL,
            reserved_usd REAL NOT NULL,
            usd REAL,
            low_usd REAL,
            high_usd REAL,
            prompt_tokens INTEGER,
            cached_tokens INTEGER,
            cache_write_tokens INTEGER,
            completion_tokens INTEGER,
            reasoning_tokens INTEGER,
            http_status INTEGER,
            request_id TEXT,
            finish_reason TEXT,
            error TEXT,
            latency_s REAL,
            pid INTEGER NOT NULL,
            pid_start TEXT,
            host TEXT NOT NULL,
            boot_id TEXT,
            reserved_at REAL NOT NULL,
            settled_at REAL
        )""",
        "CREATE INDEX calls_status ON calls (status)",
        "CREATE INDEX calls_run ON calls (run_id)",
        "CREATE INDEX calls_task ON calls (task_id)",
        "CREATE INDEX calls_bench ON calls (bench_id)",
        "CREATE INDEX calls_model ON calls (provider, model, status)",
    ),
    # The model the provider says it served; NULL on older rows and when it said nothing.
    2: ("ALTER TABLE calls ADD COLUMN served_model TEXT",),
    # A settled call that billed above its reservation: by how much, and why (ADR 0013). NULL
    # on older rows (the report still compares usd with reserved_usd) and on calls inside it.
    3: (
        "ALTER TABLE calls ADD COLUMN over_usd REAL",
        "ALTER TABLE calls ADD COLUMN overrun TEXT",
    ),
    # A prompt count the request cannot have had: above the model's window, or below what its
    # bytes encode (ADR 0067). NULL on older rows and on every believable count.
    4: ("ALTER TABLE calls ADD COLUMN misreport TEXT",),
}


class LedgerError(UsageError):
    """The ledger file cannot be used as asked (corrupt, locked, newer, missing): exit 2."""

    def __init__(self, path: Path, problem: str, fix: str) -> None:
        self.path = path
        super().__init__(f"ledger {path}: {problem} (fix: {fix})")


@dataclass(frozen=True)
class CallRow:
    """One provider attempt as the ledger holds it. Dollars are None when the model is unpriced
    (and, for low/high, while a reservation is open)."""

    id: int
    status: Status
    run_id: str
    task_id: str
    bench_id: str | None
    step: int
    step_type: str
    worker: str
    provider: str
    model: str
    attempt: int
    priced: bool
    prompt_bytes: int
    est_prompt_tokens: int
    max_output_tokens: int
    reserved_usd: float
    usd: float | None
    low_usd: float | None
    high_usd: float | None
    prompt_tokens: int | None
    cached_tokens: int | None
    cache_write_tokens: int | None
    completion_tokens: int | None
    reasoning_tokens: int | None
    http_status: int | None
    request_id: str | None
    finish_reason: str | None
    error: str | None
    latency_s: float | None
    pid: int
    pid_start: str | None
    host: str
    boot_id: str | None
    reserved_at: float
    settled_at: float | None
    tags: dict[str, str] = field(default_factory=dict)
    price: dict[str, Any] | None = None
    served_model: str | None = None  # as the response named it; `model` is what was asked for
    over_usd: float | None = None  # billed above the reservation (settled rows only)
    overrun: str | None = None  # which bound the reported usage broke, in words
    misreport: str | None = None  # a prompt count past the window or below the bytes, in words

    @property
    def over_reservation(self) -> bool:
        """Settled above its reservation: the one way a budget can be passed (ADR 0013)."""
        return self.over_usd is not None and self.over_usd > 0

    def overrun_text(self) -> str:
        """What the run's reason and the bill say of a call over its reservation."""
        return (
            f"{self.provider} {self.model} billed ${self.usd or 0.0:.4f} for step {self.step} "
            f"({self.step_type}), ${self.over_usd or 0.0:.4f} more than the "
            f"${self.reserved_usd:.4f} reserved for it: {self.overrun}"
        )

    @property
    def served_other_model(self) -> bool:
        """The provider says it served a model other than the one asked for (wire.served)."""
        return self.served_model is not None and not same_model(self.model, self.served_model)

    @property
    def lost_usage(self) -> bool:
        """The call may have been billed but its usage is unknown: a low-high bound."""
        return self.status == "bound"

    def dollars_text(self) -> str:
        """'$0.0123', a range '$0.0000-$0.0400' when usage was lost, or 'unpriced'."""
        if not self.priced:
            return "unpriced"
        if self.status == "reserved":
            return f"{format_usd(0.0, self.reserved_usd)} (open)"
        return format_usd(self.low_usd or 0.0, self.high_usd or 0.0)


_COLUMNS = tuple(name for name in CallRow.__dataclass_fields__ if name not in ("tags", "price"))
ROW_COLUMNS = (*_COLUMNS, "tags", "price")  # the order row_from_sql reads
SELECT_ROW = f"SELECT {', '.join(ROW_COLUMNS)} FROM calls"


def row_from_sql(values: tuple[Any, ...]) -> CallRow:
    data = dict(zip(ROW_COLUMNS, values, strict=True))
    data["priced"] = bool(data["priced"])
    data["tags"] = json.loads(data["tags"] or "{}")
    data["price"] = json.loads(data["price"]) if data["price"] else None
    return CallRow(**data)


def locked_problem(path: Path, text: str) -> LedgerError | None:
    """The LedgerError for SQLite's error `text` when another process held the file too long."""
    if "locked" in text or "busy" in text:
        return LedgerError(
            path,
            f"the file stayed locked by another process past the busy timeout ({text})",
            "wait for the other ssw process to finish, or point --ledger at another file",
        )
    return None


def _problem(path: Path, exc: sqlite3.Error) -> LedgerError:
    text = str(exc)
    if (locked := locked_problem(path, text)) is not None:
        return locked
    if "disk is full" in text or getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
        return LedgerError(
            path,
            f"the disk is full ({text}); the ledger is as it was before this write",
            "free space on the disk that holds it, then run the same command again",
        )
    if "readonly" in text or "unable to open" in text:
        return LedgerError(
            path, f"cannot write the ledger ({text})", "make the file and its folder writable"
        )
    return LedgerError(
        path,
        f"not a usable ledger ({text}); the file was left unchanged",
        "move the file aside (keep it: it is your spend record) or point --ledger elsewhere",
    )


@contextlib.contextmanager
def errors_as(path: Path, to_error: Callable[[Path, sqlite3.Error], LedgerError]) -> Iterator[None]:
    """SQLite's errors on this file, raised as the one-line LedgerErrors `to_error` makes."""
    try:
        yield
    except sqlite3.Error as exc:
        raise to_error(path, exc) from exc


def guarded(path: Path) -> contextlib.AbstractContextManager[None]:
    """Turn SQLite's errors on this file into one-line LedgerErrors."""
    return errors_as(path, _problem)


@contextlib.contextmanager
def immediate(
    conn: sqlite3.Connection, path: Path, *, fsync: bool = True
) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken before any read: admission across processes is atomic.

    `fsync=True` (a reservation of dollars): the commit is on disk before this returns, through
    a power loss. `fsync=False` (a settlement, which only lowers what a reservation counts): the
    commit survives SIGKILL at once and reaches the disk with the next fsynced commit; a power
    loss in between leaves the reservation's upper bound standing, never less than was spent, or
    takes back the row of a call that reserved no dollars (ADR 0074)."""
    with guarded(path):
        conn.execute(f"PRAGMA synchronous = {'FULL' if fsync else 'NORMAL'}")
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


def connect_rw(path: Path, busy_timeout_s: float = BUSY_TIMEOUT_S) -> sqlite3.Connection:
    """A write connection to a ledger file that exists and was checked (ledger.opening)."""
    with guarded(path):
        # isolation_level=None: transactions are explicit, so BEGIN IMMEDIATE means what it says.
        conn = sqlite3.connect(
            path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
        )
    try:
        configure(conn, path, busy_timeout_s)
    except BaseException:
        conn.close()
        raise
    return conn


def configure(
    conn: sqlite3.Connection, path: Path, busy_timeout_s: float, *, sync: bool = True
) -> None:
    """WAL mode and the busy timeout; `sync=False` for a file nobody sees yet (ledger.create),
    which its maker fsyncs whole before it links it into place."""
    with guarded(path):
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        # Set before the switch to WAL, so a file nobody sees yet is not synced for it; FULL
        # until a transaction says otherwise (`immediate(fsync=False)`: settlements, and
        # reservations that hold no dollars, ADR 0074).
        conn.execute(f"PRAGMA synchronous = {'FULL' if sync else 'OFF'}")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise LedgerError(
            path,
            f"SQLite could not switch the file to WAL mode (it stayed {mode!r})",
            "keep the ledger on a local disk, not a network or read-only one",
        )


def has_schema(conn: sqlite3.Connection, path: Path) -> bool:
    """Whether the file has the ledger's schema table; a LedgerError when it holds other tables
    (some other SQLite database), False when it holds none."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "schema_version" in tables:
        return True
    if tables - {"sqlite_sequence"}:
        raise LedgerError(
            path,
            "is a SQLite database but not a stepswitch ledger (no schema_version table)",
            "point --ledger at another file",
        )
    return False


def schema_version(conn: sqlite3.Connection, path: Path) -> int:
    """The file's schema version; a LedgerError when a newer stepswitch wrote it."""
    version = int(conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0)
    if version > SCHEMA_VERSION:
        raise LedgerError(
            path,
            f"was written by a newer stepswitch (schema {version}; this one reads up to "
            f"{SCHEMA_VERSION})",
            "upgrade stepswitch, or point --ledger at another file",
        )
    return version


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Inside a write transaction: bring the schema up to date (a new file from nothing)."""
    if not has_schema(conn, path):
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO schema_version (version) VALUES (0)")
    version = schema_version(conn, path)
    for target in range(version + 1, SCHEMA_VERSION + 1):
        for statement in MIGRATIONS[target]:
            conn.execute(statement)
        conn.execute("UPDATE schema_version SET version = ?", (target,))
