"""`ssw site build`: find the runs, make the page, check it, write it. A page with a
secret-shaped string is never written; a page that mentions this machine's folders is written
and said so."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from stepswitch.errors import UsageError
from stepswitch.site.page import render_page
from stepswitch.site.scan import machine_paths, secret_shapes
from stepswitch.site.sources import Source, find_sources
from stepswitch.site.view import boards

PAGE = "index.html"
BLOCK_OPEN = '<script type="application/json" id="'
_TASK = re.compile(r'"task":"((?:[^"\\]|\\.)*)"')  # a block's task, as page.json_block writes it


@dataclass(frozen=True)
class Built:
    page: Path
    sources: int
    task_runs: int
    bytes: int
    warnings: tuple[str, ...]
    # Task runs the page shows without a record (it does not load, or its folder is gone): why.
    unloaded: tuple[str, ...] = ()


def _task_at(html: str, offset: int) -> str:
    """Which task's records hold `offset` of the page: its data block names the task."""
    start = html.rfind(BLOCK_OPEN, 0, offset)
    found = _TASK.search(html, start, start + 4000) if start >= 0 else None
    if found is None:
        return "the page's tables"
    task = json.loads('"' + found.group(1) + '"')  # the JSON string's escapes undone
    return f"the records of task {task!r}"


def check_page(html: str, sources: list[Source]) -> list[str]:
    """Refuse a page with a secret-shaped string; return warnings for this machine's paths."""
    shapes = secret_shapes(html)
    if shapes:
        where = "; ".join(f"{kind} in {_task_at(html, at)}" for kind, at in shapes)
        raise UsageError(
            f"the page would hold {where}: not written. Remove that run, or the string from its "
            "record (`grep -rn` in the run folders given finds it)"
        )
    roots = [str(s.root.resolve()) for s in sources] + [str(Path.cwd())]
    return [
        f"{_task_at(html, at)} mention {folder}, a folder of this machine: check them before "
        "publishing the page"
        for folder, at in machine_paths(html, roots)
    ]


def build_site(paths: list[Path], out: Path, title: str | None = None) -> Built:
    unique = list(dict.fromkeys(p.resolve() for p in paths))
    sources = find_sources(unique)
    board_list = boards(sources)
    html = render_page(board_list, title=title or "Stepswitch replay")
    warnings = check_page(html, sources)
    out.mkdir(parents=True, exist_ok=True)
    page = out / PAGE
    staged = page.with_suffix(".html.tmp")
    staged.write_text(html, encoding="utf-8")
    staged.replace(page)
    return Built(
        page=page,
        sources=len(sources),
        task_runs=sum(len(s.runs) for s in sources),
        bytes=len(html.encode("utf-8")),
        warnings=tuple(warnings),
        unloaded=tuple(
            run.problem if s.kind == "run" else f"{s.name}: {run.problem}"
            for s in sources
            for run in s.runs
            if run.problem is not None
        ),
    )
