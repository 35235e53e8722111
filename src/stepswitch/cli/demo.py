"""`ssw demo`: the sample repository, committed in a new folder, and the demo task run on it
with scripted replies: no key, no network. Each step is also priced as if a real ladder had
served it (demo/as_if.py), and the run's replay page is built into its run folder."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from stepswitch.agent.events import Sink
from stepswitch.cli.render import escaped
from stepswitch.cli.replay_page import replay_page
from stepswitch.cli.run import RunOptions, run_local
from stepswitch.demo.as_if import AsIfBill, as_if_models
from stepswitch.demo.demo import POLICY, SCRIPT, TASK, TOUR, TOUR_TASK, prepare_sample
from stepswitch.errors import UsageError
from stepswitch.records.run import RunRecord
from stepswitch.registry.presets import load_registry
from stepswitch.util.sandbox import BACKENDS


def run_demo(
    target: Path | None,
    print_line: Callable[[str], None],
    sandbox: str = "auto",
    extra_sinks: tuple[Sink, ...] = (),
) -> RunRecord:
    show = escaped(print_line)  # the bill names the model's steps; paths may hold controls too
    as_if = AsIfBill(as_if_models(load_registry()), show)  # refuses before anything is made
    if sandbox not in ("auto", *BACKENDS):  # before a folder is made for the sample
        raise UsageError(f"unknown sandbox {sandbox!r}: choose auto, {', '.join(BACKENDS)}")
    repo = prepare_sample(target or Path(tempfile.mkdtemp(prefix="ssw-demo-")))
    # The sample's tests run with this Python (it has pytest), whatever PATH says.
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    show(f"demo repository: {repo}")
    show(f"task: {TASK}")
    record = run_local(
        RunOptions(repo=repo, task=TASK, policy_path=POLICY, script=SCRIPT, sandbox=sandbox),
        print_line,
        extra_sinks=(as_if, *extra_sinks),
    )
    show(f"see the change: git -C {repo} show {record.branch}")
    replay_page(repo, record, show, f"Stepswitch demo run {record.run_id}")
    return record


def run_tour(
    repo: Path,
    print_line: Callable[[str], None],
    sandbox: str = "auto",
    extra_sinks: tuple[Sink, ...] = (),
    task: str | None = None,
) -> RunRecord:
    """`ssw demo --repo PATH`: the scripted tour on the user's own repository (fakes/tour.py):
    ssw's steps, the repository's real gates on the untouched tree, the records and the page;
    no model, no key, no edit."""
    show = escaped(print_line)
    as_if = AsIfBill(as_if_models(load_registry()), show)
    show(
        "scripted tour: every reply is canned (no model, no key); it changes nothing, and the "
        "gates give this repository's real verdict on its untouched tree before any step"
    )
    record = run_local(
        RunOptions(
            repo=repo, task=task or TOUR_TASK, policy_path=POLICY, script=TOUR, sandbox=sandbox
        ),
        print_line,
        extra_sinks=(as_if, *extra_sinks),
    )
    show(
        f"the tour changed nothing, so it ended {record.outcome} (no change is never `done`); "
        "the `gates:` lines above give your repository's verdict on its untouched tree"
    )
    show(
        "that was the tour; for a real run: `ssw init PROVIDER`, then "
        "`ssw run . --policy .ssw/policy.toml --task TEXT`, or `ssw run . --model "
        "PROVIDER:MODEL_ID --task TEXT`"
    )
    replay_page(repo, record, show, f"Stepswitch demo run {record.run_id}")
    return record


def tour_exit_code(record: RunRecord) -> int:
    """0 when the tour ended as a tour ends (it changes nothing: `no_change`); the run's own
    code for any other end (a refused pre-flight, an interruption, a broken script)."""
    return 0 if record.outcome == "no_change" else record.exit_code or 0
