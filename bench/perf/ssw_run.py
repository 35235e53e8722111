"""One repetition of the ssw harness benchmark, in a fresh process (run_all.py starts it).

Makes the fixture repository, writes the 40-reply script and the policy, and times
`run_task` as a library call, with what `ssw run` does around it (worktree, ledger, workspace,
gates, providers) inside the clock and the scripted server outside it; no monkeypatching of
ssw. Prints one JSON object on stdout.

    .venv/bin/python bench/perf/ssw_run.py [--profile out.prof]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import common
import counts
import task


def _replay(gate_calls: list[tuple[str, dict[str, str]]], repeats: int = 3) -> float:
    """Cross-check: the run tool's commands and the recorded gate commands replayed directly
    with Popen in a fresh copy of the fixture (the run tool's in its first state, the gates' in
    the final one, where the first gate run met six tests fewer); median of the sums."""
    sums = []
    for _ in range(repeats):
        root = Path(tempfile.mkdtemp(prefix="ssw-replay-")) / "repo"
        task.make_fixture(root)
        env = gate_calls[0][1] if gate_calls else dict(os.environ)
        total = sum(
            common.time_command(c, root, env, shell_list=True) for c in task.ssw_run_commands()
        )
        (root / "invkit/parse.py").write_text(task.PARSE_V3, encoding="utf-8")
        (root / "tests/test_parse_groups.py").write_text(task.TEST_GROUPS, encoding="utf-8")
        for command, gate_env in gate_calls:
            total += common.time_command(command, root, gate_env, shell_list=True)
        sums.append(total)
        shutil.rmtree(root.parent, ignore_errors=True)
    return statistics.median(sums)


def _sandbox_start_s(
    sandbox: Any, repo: Path, repeats: int = 15
) -> tuple[float, dict[str, list[float]]]:
    """What confining one command adds: `true` through the run's sandbox (the policy `ssw run`
    uses, on this checkout) against `true` run directly, alternating; difference of medians, and
    the raw timings it comes from (results.json keeps them: ADR 0026)."""
    from stepswitch.util.sandbox import Confinement, child_env, policy_for_worktree, sandbox_home

    if not sandbox.confines:
        return 0.0, {"direct": [], "confined": []}
    with sandbox_home() as home:
        env = child_env(os.environ, home)
        wrapped = Confinement(sandbox, policy_for_worktree(repo, repo, home, env)).wrap(
            ["true"], repo
        )
        direct: list[float] = []
        confined: list[float] = []
        for _ in range(repeats):
            for argv, out in ((["true"], direct), (wrapped, confined)):
                began = time.perf_counter()
                subprocess.run(argv, cwd=repo, env=env, check=True)
                out.append(time.perf_counter() - began)
    difference = max(0.0, statistics.median(confined) - statistics.median(direct))
    return difference, {"direct": direct, "confined": confined}


def _counterfactual(bodies: list[dict[str, Any]], script: dict[str, Any]) -> dict[str, Any]:
    """Each step's prompt if the run were one conversation carrying every earlier message.

    The history grows by what each request adds: a request that continues the previous one
    (same phase) adds its new messages; a request that starts a new phase first closes the
    previous phase with the reply the script served (and a `done` call's summary as its tool
    result), then adds its own messages, its system prompt sent as a user message. Counted like
    the scripted provider counts the real prompts: json.dumps(messages) at 4 characters a token,
    tool definitions left out on both sides."""
    history: list[dict[str, Any]] = []
    previous: list[dict[str, Any]] | None = None
    full: list[int] = []
    full_uncached: list[int] = []
    last_json = ""
    for i, body in enumerate(bodies):
        messages = body["messages"]
        if (
            previous is not None
            and len(messages) > len(previous)
            and messages[: len(previous)] == previous
        ):
            history += messages[len(previous) :]
        else:
            if previous is not None:
                reply = script["replies"][i - 1]
                calls = reply.get("tool_calls", [])
                history.append(
                    {
                        "role": "assistant",
                        "content": reply.get("content", ""),
                        **(
                            {
                                "tool_calls": [
                                    {
                                        "id": f"call_{i}_{k}",
                                        "type": "function",
                                        "function": {
                                            "name": c["name"],
                                            "arguments": json.dumps(c["arguments"]),
                                        },
                                    }
                                    for k, c in enumerate(calls)
                                ]
                            }
                            if calls
                            else {}
                        ),
                    }
                )
                for k, c in enumerate(calls):
                    if c["name"] == "done":
                        history.append(
                            {
                                "role": "tool",
                                "tool_call_id": f"call_{i}_{k}",
                                "content": c["arguments"]["summary"],
                            }
                        )
            history += [
                {**m, "role": "user"} if m["role"] == "system" and history else m for m in messages
            ]
        text = json.dumps(history)
        full.append(common.tokens(len(text)))
        same = common.common_prefix_len(text, last_json)
        full_uncached.append(common.tokens(len(text)) - min(common.tokens(len(text)), same // 4))
        last_json = text
        previous = messages
    return {"full_history_prompt_tokens": full, "full_history_uncached_tokens": full_uncached}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", type=Path, help="write a cProfile of run_task here")
    parser.add_argument("--sandbox", default="auto", help="as `ssw run --sandbox` (default auto)")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="ssw-bench-"))
    repo = task.make_fixture(tmp / "repo")
    script = task.ssw_script()
    script_path = tmp / "script.yaml"
    script_path.write_text(json.dumps(script, indent=1), encoding="utf-8")
    policy_path = tmp / "policy.toml"
    policy_path.write_text(task.POLICY, encoding="utf-8")

    import stepswitch.fakes.loopback as loopback
    from stepswitch.agent.prepare import ask_gates_early, prepare_run
    from stepswitch.agent.providers import HttpProviders
    from stepswitch.agent.repo_gates import RepoGates
    from stepswitch.agent.run import RunExtras, run_task
    from stepswitch.agent.workspace.paths import Workspace
    from stepswitch.agent.workspace.worktree import (
        create_worktree,
        remove_worktree,
        worktree_path,
    )
    from stepswitch.cli.render import TerminalPrinter
    from stepswitch.fakes.scripted import load_script, start_scripted_server
    from stepswitch.gates.plugins import end_early_probes
    from stepswitch.gates.suite import SuiteResult
    from stepswitch.ledger import open_ledger
    from stepswitch.policy.model import load_policy
    from stepswitch.records.folder import RunFolder, load_run
    from stepswitch.records.run import RunIds
    from stepswitch.registry.presets import SCRIPTED_PROVIDER, load_registry
    from stepswitch.util.sandbox import choose_sandbox, sandbox_home

    # The fake provider is not the harness: its server starts before the clock and its time
    # inside each request is measured (ServerClock) and subtracted.
    clock = common.ServerClock()
    clock.instrument(loopback)
    server, _ = start_scripted_server(load_script(script_path))

    # Gate subprocesses, timed through an injected gate runner around the run's own RepoGates.
    gate_times: list[float] = []
    gate_calls: list[tuple[str, dict[str, str]]] = []

    class TimedGates:
        def __init__(self, inner: RepoGates) -> None:
            self.inner = inner
            self.names = inner.names
            self.description = inner.description

        def before_edit(self) -> None:
            self.inner.before_edit()

        def run(self, changed: list[str]) -> SuiteResult:
            began = time.perf_counter()
            try:
                return self.inner.run(changed)
            finally:
                gate_times.append(time.perf_counter() - began)
                gate_calls.extend((g.command, self.inner_env) for g in self.inner.config.gates)

        @property
        def inner_env(self) -> dict[str, str]:
            return dict(self.inner.suite.env)

    lines: list[str] = []
    sandbox = choose_sandbox(args.sandbox)
    cleanup = contextlib.ExitStack()
    registry = load_registry()
    policy = load_policy(policy_path)
    processes = counts.ProcessCounter()
    processes.install()
    gc_before = [s["collections"] for s in gc.get_stats()]
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    counts.mark(counts.MARK_BEGIN)
    processes.counting = True
    began = time.perf_counter()
    # What `ssw run` does around run_task, in its order (cli/run.py): ledger, providers, worktree,
    # the run prepared in it (agent/prepare.py: gates read at the base commit, the sandbox, the
    # environment), less the pre-flight, which the first-call figure covers.
    run_id = "bench-perf"
    ledger = open_ledger(repo / ".ssw" / "ledger.sqlite")
    providers = HttpProviders(registry, base_urls={SCRIPTED_PROVIDER: server.base_url})
    providers.expect(policy.workers.values())  # as `ssw run` does (cli/run.py, ADR 0093)
    home = cleanup.enter_context(sandbox_home())
    # As `ssw run` does (cli/run.py): the gates' Python asked its one probe while the worktree
    # is made (ADR 0084, ADR 0091), the answer waited for at the first gate run that needs it.
    ask_gates_early(repo, worktree_path(repo, run_id), home)
    cleanup.callback(end_early_probes)
    worktree = create_worktree(repo, run_id)
    prepared = prepare_run(
        worktree.path,
        repo=repo,
        tree=worktree.git,
        sandbox=sandbox,
        home=home,
        registry=registry,
        cleanup=cleanup,
        preflight=False,
    )
    folder = RunFolder(repo / ".ssw" / "runs" / run_id)
    gc.freeze()  # as `ssw run` does right before run_task
    record = run_task(
        dataclasses.replace(prepared, gates=TimedGates(prepared.gates)),
        task=task.TASK,
        policy=policy,
        ledger=ledger,
        folder=folder,
        ids=RunIds(run_id=run_id, task_id=run_id),
        budgets=(),
        providers=providers,
        deadline=time.monotonic() + policy.limits.wall_time_s,
        extras=RunExtras(sinks=[TerminalPrinter(lines.append)]),
    )
    providers.close()
    remove_worktree(worktree)
    ledger.close()
    cleanup.close()
    wall = time.perf_counter() - began
    processes.counting = False
    counts.mark(counts.MARK_END)
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(str(args.profile))
    gc_after = [s["collections"] for s in gc.get_stats()]
    server.stop()
    scripted: dict[str, float] = {}
    git: dict[str, float] = {}

    loaded = load_run(folder.root)
    model_steps = loaded.model_steps
    gate_steps = [s for s in loaded.steps if s.kind == "gates"]
    problems = []
    if record.outcome != "done":
        problems.append(f"outcome {record.outcome}: {record.reason}")
    if record.totals.steps != len(task.TURNS):
        problems.append(f"{record.totals.steps} steps, expected {len(task.TURNS)}")
    if len(gate_steps) != 2 or len(gate_calls) != 2 or "passed" not in gate_steps[-1].note:
        problems.append(f"gates: {[s.note for s in gate_steps]}, {len(gate_calls)} commands")
    for s in model_steps:
        if s.model_output_failure or s.error or any(not t.ok for t in s.tool_calls):
            problems.append(f"step {s.step}: {s.model_dump_json()[:300]}")
    if problems:
        raise SystemExit("the scripted run went wrong:\n" + "\n".join(problems + lines))

    # Subtracted command time: the gate subprocesses as timed in the run, plus the run tool's
    # commands run directly with Popen here (median of 5 each; the run tool does not time its
    # subprocess on its own). A replay of all of them is kept as a cross-check.
    env = Workspace(repo).command_env()
    run_tool_s, run_tool_detail = common.commands_time(
        task.ssw_run_commands(), repo, env, shell_list=True
    )
    gates_s = sum(gate_times)
    commands_s = gates_s + run_tool_s
    replay_s = _replay(gate_calls)
    server_s = clock.total_s
    scripted_s = sum(scripted.values())
    # The sandbox is ssw's, not the command's: the run tool's commands are subtracted at their
    # direct (unconfined) time, so their sandbox start is already overhead; the gates' commands
    # were timed in the run, wrapper included, so one wrapper start each is added back.
    sandbox_per_command_s, sandbox_samples = _sandbox_start_s(sandbox, repo)
    sandbox_in_gates_s = len(gate_calls) * sandbox_per_command_s
    overhead = wall - commands_s - server_s - scripted_s + sandbox_in_gates_s
    # Setup: from run_task's start to the first request reaching the server, less the scripted
    # server's own start (already subtracted); the rest of the overhead is the loop and the end.
    to_first = (clock.first_request_at or began) - began
    setup_s = to_first - scripted.get("load_script_s", 0.0) - scripted.get("server_start_s", 0.0)

    bodies = [r.json() for r in server.requests]
    counter = _counterfactual(bodies, script)
    prompt = [s.prompt_tokens for s in model_steps]
    cached = [s.cached_tokens for s in model_steps]
    shares = [s.prompt_repeat_share for s in model_steps]
    first_of_phase = [
        i == 0 or model_steps[i - 1].step_type != s.step_type or s.step_type == "review"
        for i, s in enumerate(model_steps)
    ]
    common.emit(
        {
            "agent": "ssw",
            "python": sys.version.split()[0],
            "steps": record.totals.steps,
            "wall_s": wall,
            "server_s": server_s,
            "server_requests": clock.requests,
            "scripted_plumbing_s": scripted_s,
            "scripted_plumbing": scripted,
            "commands_s": commands_s,
            "gates_in_run_s": gate_times,
            "gate_commands": [common.portable(c) for c, _ in gate_calls],
            "run_tool_direct": run_tool_detail,
            "cross_check_replay_s": replay_s,
            "sandbox": sandbox.name,
            "sandbox_per_command_ms": sandbox_per_command_s * 1000,
            "sandbox_start_samples_s": sandbox_samples,
            "sandboxed_gate_commands": len(gate_calls),
            "sandbox_in_gates_s": sandbox_in_gates_s,
            "overhead_s": overhead,
            "overhead_per_step_ms": overhead / record.totals.steps * 1000,
            "to_first_request_s": setup_s
            + scripted.get("load_script_s", 0.0)
            + scripted.get("server_start_s", 0.0),
            "setup_s": setup_s,
            "after_first_request_per_step_ms": (overhead - setup_s) / record.totals.steps * 1000,
            "git_s": sum(git.values()),
            "git": git,
            "processes": processes.summary(),
            "gc_collections": [a - b for a, b in zip(gc_after, gc_before, strict=True)],
            "prompt": {
                "prompt_tokens": prompt,
                "cached_tokens": cached,
                "repeat_share": shares,
                "first_of_phase": first_of_phase,
                "step_types": [s.step_type for s in model_steps],
                "workers": [s.worker for s in model_steps],
                **counter,
            },
        }
    )
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
