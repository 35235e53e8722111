"""What a task run leaves behind, read back: whether it called a model, the row of a run the
bench lost mid-way (from its record folder and the ledger), and recorded text without the
machine's paths."""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from pathlib import Path

from stepswitch.bench.plan import RunKey
from stepswitch.bench.results import ContestantKind, ResultRow
from stepswitch.ledger import Ledger
from stepswitch.records.abandoned import mark_abandoned
from stepswitch.records.folder import LoadedRun, load_run
from stepswitch.records.money import CostRange
from stepswitch.records.steps import ModelStep


def kept_calls(ledger: Ledger, run_id: str, folder: Path, kind: str) -> int:
    """The calls that keep an unfinished run as a failure: `called_model`'s, except for the
    built-ins, which call no model and pay nothing, so an interrupted one simply runs again."""
    return 0 if kind in ("oracle", "null") else called_model(ledger, run_id, folder)


def called_model(ledger: Ledger, run_id: str, folder: Path) -> int:
    """How many attempts the run sent (ledger rows, open ones included), or model steps it
    recorded: 0 means nothing can have been billed."""
    rows = len(ledger.rows(run_id))
    if rows:
        return rows
    steps = folder / "steps.jsonl"
    if not steps.exists():
        return 0
    sent = 0
    for line in steps.read_text("utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # torn by a kill
        # A step refused by a budget has no attempt: nothing left the machine.
        sent += event.get("kind") == "model_step" and event.get("attempts", 0) > 0
    return sent


def loaded_run(folder: Path) -> LoadedRun | None:
    try:
        return load_run(folder)
    except Exception:  # a folder a kill left half-written: the ledger still has the dollars
        return None


def fill_from_steps(row: ResultRow, steps: list[ModelStep]) -> None:
    """Tokens, refusals, failures, models and dollars by model and step type, from the steps."""
    by_model: dict[str, list[float]] = {}
    by_type: dict[str, list[float]] = {}
    for s in steps:
        if s.cost is not None:
            for table, name in ((by_model, f"{s.provider}/{s.model}"), (by_type, s.step_type)):
                low, high = table.get(name, [0.0, 0.0])
                table[name] = [low + s.cost.low, high + s.cost.high]
        if s.served_other_model and s.served_model:
            row.served_models[s.model] = s.served_model
    row.dollars_by_model, row.dollars_by_step_type = by_model, by_type
    row.refused_tool_calls = sum(c.refused for s in steps for c in s.tool_calls)
    row.served_other_model = bool(row.served_models)
    row.steps = len(steps)


def lost_row(
    key: RunKey,
    kind: ContestantKind,
    root: Path,
    bench_id: str,
    ledger: Ledger,
    *,
    outcome: str,
    reason: str,
) -> ResultRow:
    """The row of a run the bench lost mid-way (killed, crashed): a failure, with what the
    record folder and the ledger say it did and spent."""
    folder = root / key.folder()
    run_id = key.run_id(bench_id)
    row = ResultRow(
        task=key.task,
        suite=key.task.partition("/")[0],
        contestant=key.contestant,
        contestant_kind=kind,
        attempt=key.attempt,
        outcome=outcome,
        reason=reason,
        run_id=run_id,
        folder=key.folder(),
    )
    loaded = loaded_run(folder)
    if loaded is not None:
        steps = loaded.model_steps
        fill_from_steps(row, steps)
        _tokens(row, steps)
        row.model_output_failures = sum(s.model_output_failure is not None for s in steps)
        row.escalations = max((s.escalation for s in steps), default=0)
        row.run_outcome = loaded.run.outcome
    rows = ledger.rows(run_id)
    priced = [r for r in rows if r.priced]
    row.dollars_low = sum(r.low_usd or 0.0 for r in priced)
    row.dollars_high = sum(r.reserved_usd if r.high_usd is None else r.high_usd for r in priced)
    row.unpriced_steps = len({r.step for r in rows if not r.priced})
    return row


def _tokens(row: ResultRow, steps: list[ModelStep]) -> None:
    prompt = sum(s.prompt_tokens for s in steps)
    completion = sum(s.completion_tokens for s in steps)
    row.cached_tokens = sum(s.cached_tokens for s in steps)
    row.tokens = prompt + completion
    row.uncached_tokens = row.tokens - row.cached_tokens


SCRATCH_PREFIX = "ssw-bench-"  # a task run's temporary folder: tempfile.mkdtemp(prefix=...)
CONFIG_PREFIX = "ssw-test-config-"  # gates.test_config.config_folder: the pinned pytest configs
PACKAGE = Path(__file__).resolve().parent.parent  # ssw's own code, quoted by its warnings


def _scratch_pattern(prefix: str = SCRATCH_PREFIX) -> re.Pattern[str]:
    roots = {tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir())}
    alternatives = "|".join(re.escape(r) for r in sorted(roots, key=len, reverse=True))
    return re.compile(rf"(?:{alternatives})/{prefix}[A-Za-z0-9_]+")


def scrub(text: str) -> str:
    """A machine's paths out of recorded text: a task run's temporary folder becomes <scratch>,
    the gates' pinned configurations <ssw-config>, ssw's own package <stepswitch>, the home
    folder ~ (test output and gate reports quote them in tracebacks and warnings)."""
    text = _scratch_pattern().sub("<scratch>", text)
    text = _scratch_pattern(CONFIG_PREFIX).sub("<ssw-config>", text)
    for form in {str(PACKAGE), os.path.realpath(PACKAGE)}:
        text = text.replace(form + os.sep, "<stepswitch>" + os.sep)
    for form in {str(Path.home()), str(Path.home().resolve())}:
        text = text.replace(form + os.sep, "~" + os.sep)
    return text


def scrub_folder(folder: Path) -> None:
    for path in folder.rglob("*"):
        if not path.is_file() or path.is_symlink():
            continue
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        clean = scrub(text)
        if clean != text:
            path.write_text(clean, encoding="utf-8", errors="surrogateescape")


def scrubbed(row: ResultRow, root: Path) -> ResultRow:
    """The row and its record folder (under the bench folder `root`) without machine paths."""
    row.reason = scrub(row.reason)
    if (root / row.folder).is_dir():
        scrub_folder(root / row.folder)
    return row


def mark_lost_record(folder: Path, row: ResultRow) -> None:
    """The lost task run's own run.json says what the journal says: interrupted, at the
    ledger's range. A record a kill left unreadable, or none, stays as it is (the row says it)."""
    why = "the bench ended during this run (killed, crashed or stopped); found when it resumed"
    with contextlib.suppress(OSError, ValueError):
        mark_abandoned(folder, why, CostRange(low=row.dollars_low, high=row.dollars_high))
