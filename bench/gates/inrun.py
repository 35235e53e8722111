"""The gates benchmark inside a real `ssw run` worktree, on real projects with their own .venv.

For BENCH_PROJECT (python-dateutil, boltons or pyflakes; set up by setup-real.sh, mutations in
mutations-<project>.json from mutate.py):

- a worktree of the project is made with `stepswitch.agent.workspace.worktree.create_worktree`,
  exactly as `ssw run` makes it (<repo>/.ssw/worktrees/<id>, a new branch; the repository's .venv
  with its editable install stays in the user's checkout, outside the worktree);
- the gates' interpreter and environment are those `ssw run` uses (GateSuite: the checkout's
  .venv, the worktree's source first on PYTHONPATH); the pre-flight import check runs once and its
  line is recorded; a baseline `ssw gates <worktree>` (full suite, clean tree) runs once, as the
  run's pre-flight baseline does, and leaves the measured test durations;
- per mutation, applied inside the worktree and reverted after:
  (a) the real CLI: `ssw gates <worktree> --changed <module>`, its exit code (1: caught; 0:
      missed) and the time it prints to the first failing verdict (suite start to the end of the
      failing stage, selection included) and its process wall time (start-up and pre-flight too);
  (w) the gates as `ssw run` runs them after an edit, in process: `RepoGates.run([module])` of
      one `RepoGates` made and pre-flighted once, as `ssw run` does, so its stages fork from a
      warm pytest started before it, as `ssw run` starts one when an edit begins (`gates.warm`);
      the time to the first failing verdict it reports (`run_` columns);
  (b) the project's full suite with `pytest -x` (the tests gate's own full command), wall time;
  (c) the full suite without -x, wall time;
  order (a, w, b, c) on even rows, (c, b, w, a) on odd rows; after (w) the next warm pytest is
  waited for, so its start-up is not counted in another step.
Writes results-<project>.csv (after every row, so a run cut short leaves what it measured) and
summary-<project>.json (with the sha256 prefixes of the gate code measured and the machine's load
average). Before the baseline, each mutation and each of its three runs it waits while
/tmp/ssw-quiet exists (another measurement needs a quiet machine). Run: `BENCH_PROJECT=boltons
.venv/bin/python bench/gates/inrun.py [--limit N]`.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import importlib.util
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import common

from stepswitch.agent.repo_gates import RepoGates
from stepswitch.agent.workspace.worktree import create_worktree, remove_worktree
from stepswitch.gates.config import TestsGate
from stepswitch.gates.detect import load_gates
from stepswitch.gates.suite import GateSuite
from stepswitch.util.env import clean_env

SSW = Path(sys.executable).parent / "ssw"
_FIRST = re.compile(r"first failing verdict ([\d.]+) s \(([^:]+:[^:]+): (.*)\),")
FIELDS = [
    "id",
    "module",
    "line",
    "kind",
    "order",
    "gate_rc",
    "caught",
    "first_failing_verdict_s",
    "failing_stage",
    "first_failure",
    "cli_wall_s",
    "full_x_s",
    "full_x_rc",
    "full_s",
    "full_rc",
    "ratio_vs_full_x",
    "ratio_vs_full",
    "cli_ratio_vs_full_x",
    "run_caught",
    "run_first_failing_verdict_s",
    "run_failing_stage",
    "run_ratio_vs_full_x",
    "run_ratio_vs_full",
    "load_1m",
]


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, float, str]:
    began = time.perf_counter()
    done = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=common.RUN_TIMEOUT_S
    )
    return done.returncode, time.perf_counter() - began, done.stdout + done.stderr


def code_hashes() -> dict[str, str]:
    """sha256 prefixes of the gate code that decides the selection and its order."""
    from stepswitch.gates import (
        callmap,
        callmap_tracer,
        impacted,
        pytest_runs,
        staged_tests,
        suite,
        warm,
    )
    from stepswitch.gates.plugins import PLUGIN_DIR

    files = [
        Path(impacted.__file__),
        Path(suite.__file__),
        Path(staged_tests.__file__),
        Path(pytest_runs.__file__),
        Path(callmap_tracer.__file__),
        Path(callmap.__file__),
        PLUGIN_DIR / "ssw_select.py",
        Path(warm.__file__),
        PLUGIN_DIR / "ssw_warm.py",
    ]
    # What ADR 0076 leaves to the graph (absent from gate code before it).
    found = importlib.util.find_spec("stepswitch.gates.import_time")
    if found is not None and found.origin is not None:
        files.append(Path(found.origin))
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest()[:16] for f in files}


def write_rows(rows: list[dict[str, object]], worktree: Path | None = None) -> None:
    with common.RESULTS_CSV.open("w", newline="", encoding="utf-8") as out_csv:
        writer = csv.DictWriter(out_csv, FIELDS)
        writer.writeheader()
        writer.writerows(common.portable_row(r, worktree) for r in rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="measure only the first N mutations")
    args = parser.parse_args()
    common.require_setup()
    tree = common.stepswitch_tree()
    mutations = common.load_json(common.MUTATIONS_JSON)["mutations"]
    assert isinstance(mutations, list)
    if args.limit:
        mutations = mutations[: args.limit]
    run_id = "bench-" + datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    worktree = create_worktree(common.PROJECT, run_id)
    rows: list[dict[str, object]] = []
    repo_gates: RepoGates | None = None
    try:
        root = worktree.path
        env = clean_env()
        config = load_gates(root)
        tests = next(g for g in config.gates if isinstance(g, TestsGate))
        suite = GateSuite(config, root, env, tree=worktree.git)
        check = suite.preflight()
        # no machine path in what is kept (the summary, a log of this output): ADR 0026
        interpreter = common.portable(suite.interpreter_line(), root)
        preflight = common.portable(check.line(), root)
        print(interpreter, "|", preflight, flush=True)
        full_x = ["bash", "-c", tests.stage_command(None)]
        full = ["bash", "-c", tests.stage_command(None).replace(" -x ", " ")]
        # Unconfined, as (w) and the measurements this one is compared with (ADR 0056 put
        # `ssw gates` in the run's sandbox by default).
        ssw = [str(SSW), "gates", str(root), "--sandbox", "none"]
        common.wait_quiet("the call map")
        assert suite.base is not None
        began = time.perf_counter()
        call_map = common.portable(suite.record_call_map(suite.base.commit("HEAD")), root)
        call_map_s = time.perf_counter() - began
        print(call_map, flush=True)
        common.wait_quiet("the baseline")
        rc, baseline_s, out = timed(ssw, root, env)
        print(f"baseline `ssw gates` (full suite, clean tree): rc {rc}, {baseline_s:.1f} s")
        if rc != 0:
            raise SystemExit(
                f"the clean tree fails its gates:\n{common.portable(out, root)[-3000:]}"
            )
        common.wait_quiet("the run's pre-flight")
        repo_gates = RepoGates(config, root, env, worktree.base_commit, tree=worktree.git)
        repo_gates.preflight()  # as `ssw run` does: baseline, call map (kept), warm pytest
        for index, m in enumerate(mutations):
            common.wait_quiet(str(m["id"]))
            module = str(m["module"])
            path = root / module
            original = path.read_bytes()
            lines = original.decode("utf-8").splitlines(keepends=True)
            ending = lines[int(m["line"]) - 1][len(lines[int(m["line"]) - 1].rstrip("\r\n")) :]
            lines[int(m["line"]) - 1] = str(m["after"]) + ending
            path.write_bytes("".join(lines).encode("utf-8"))
            try:
                steps = ["a", "w", "b", "c"] if index % 2 == 0 else ["c", "b", "w", "a"]
                got: dict[str, tuple[int, float, str]] = {}
                for step in steps:
                    common.wait_quiet(f"{m['id']} step {step}")
                    if step == "w":
                        in_run = repo_gates.run([module])
                        # The next edit's warm pytest, as `ssw run` starts it when an edit
                        # begins; its start-up counts nowhere.
                        repo_gates.before_edit()
                        repo_gates.warm_ready()
                        continue
                    cmd = {"a": [*ssw, "--changed", module], "b": full_x, "c": full}[step]
                    got[step] = timed(cmd, root, suite.gate_env if step != "a" else env)
            finally:
                path.write_bytes(original)
            (a_rc, a_wall, a_out), (b_rc, b_s, _), (c_rc, c_s, _) = got["a"], got["b"], got["c"]
            match = _FIRST.search(a_out)
            first = float(match.group(1)) if match else None
            row = {
                "id": m["id"],
                "module": module,
                "line": m["line"],
                "kind": m["kind"],
                "order": "".join(steps),
                "gate_rc": a_rc,
                "caught": a_rc == 1,
                "first_failing_verdict_s": first,
                "failing_stage": match.group(2) if match else "",
                "first_failure": match.group(3) if match else "",
                "cli_wall_s": round(a_wall, 3),
                "full_x_s": round(b_s, 3),
                "full_x_rc": b_rc,
                "full_s": round(c_s, 3),
                "full_rc": c_rc,
                "ratio_vs_full_x": round(b_s / first, 2) if first else None,
                "ratio_vs_full": round(c_s / first, 2) if first else None,
                "cli_ratio_vs_full_x": round(b_s / a_wall, 2),
                "run_caught": not in_run.passed,
                "run_first_failing_verdict_s": _round(in_run.first_failure_s),
                "run_failing_stage": in_run.failed.name if in_run.failed else "",
                "run_ratio_vs_full_x": _ratio(b_s, in_run.first_failure_s),
                "run_ratio_vs_full": _ratio(c_s, in_run.first_failure_s),
                # The machine is shared: its 1-minute load average after the row, for the record.
                "load_1m": round(os.getloadavg()[0], 2),
            }
            rows.append(row)
            write_rows(rows, root)  # as it goes: a run cut short still leaves its rows
            print(
                f"{m['id']} {module}:{m['line']} rc={a_rc} first={first} "
                f"in-run={row['run_first_failing_verdict_s']} [{row['run_failing_stage']}] "
                f"[{row['failing_stage']}] full-x={b_s:.2f} full={c_s:.2f} "
                f"x{row['ratio_vs_full_x']} / x{row['ratio_vs_full']}",
                flush=True,
            )
            if a_rc not in (0, 1):
                print(common.portable(a_out, root)[-2000:], flush=True)
    finally:
        if repo_gates is not None:
            repo_gates.close()
        remove_worktree(worktree)
    write_rows(rows, worktree.path)

    def spread(key: str) -> dict[str, float | None]:
        values = [float(str(r[key])) for r in rows if r[key] is not None]
        if not values:
            return {"median": None, "min": None, "max": None}
        return {
            "median": round(statistics.median(values), 2),
            "min": round(min(values), 2),
            "max": round(max(values), 2),
        }

    def slower(key: str) -> int:
        return sum(1 for r in rows if r[key] is not None and float(str(r[key])) < 1)

    summary = {
        "project": common.PROJECT_NAME,
        "version": common.PROJECT_VERSION,
        "measured": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        **tree,
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores",
        "python": platform.python_version(),
        "interpreter": interpreter,
        "preflight": preflight,
        "call_map": call_map,
        "call_map_s": round(call_map_s, 2),
        "baseline_s": round(baseline_s, 2),
        # Which selection code was measured (the working tree may be ahead of the commit).
        "code_sha256": code_hashes(),
        "mutations": len(rows),
        "missed": sum(1 for r in rows if not r["caught"]),
        "ratio_vs_full_x": spread("ratio_vs_full_x"),
        "ratio_vs_full": spread("ratio_vs_full"),
        "cli_ratio_vs_full_x": spread("cli_ratio_vs_full_x"),
        "run_missed": sum(1 for r in rows if not r["run_caught"]),
        "run_ratio_vs_full_x": spread("run_ratio_vs_full_x"),
        "run_ratio_vs_full": spread("run_ratio_vs_full"),
        "run_first_failing_verdict_s": spread("run_first_failing_verdict_s"),
        "run_slower_than_full_x": slower("run_ratio_vs_full_x"),
        "first_failing_verdict_s": spread("first_failing_verdict_s"),
        "full_x_s": spread("full_x_s"),
        "full_s": spread("full_s"),
        "load_1m": spread("load_1m"),
        "slower_than_full_x": slower("ratio_vs_full_x"),
    }
    text = common.portable(json.dumps(summary, indent=1), worktree.path)
    common.SUMMARY_JSON.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0 if summary["missed"] == 0 and summary["run_missed"] == 0 else 1


def _round(seconds: float | None) -> float | None:
    return round(seconds, 3) if seconds is not None else None


def _ratio(full: float, first: float | None) -> float | None:
    return round(full / first, 2) if first else None


if __name__ == "__main__":
    raise SystemExit(main())
