"""The replay page a run gets at its end (`ssw run`, `ssw demo`): one static file in the run's
folder, built from its records, and the line that says where it is."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from stepswitch.errors import UsageError
from stepswitch.records.run import RunRecord
from stepswitch.site.build import build_site

REPLAY = "replay"  # the replay page's folder inside the run folder


def replay_page(repo: Path, record: RunRecord, show: Callable[[str], None], title: str) -> None:
    """Build the run's page into `.ssw/runs/<id>/replay/` and say where; a page that cannot be
    built is said, never an error: the run stands and its exit code is the run's."""
    folder = repo.resolve() / ".ssw" / "runs" / record.run_id
    try:
        built = build_site([folder], folder / REPLAY, title=title)
    except UsageError as exc:
        show(f"replay page: not built ({exc})")
        return
    show(f"replay page: {built.page}")
