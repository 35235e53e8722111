"""One repetition of the ssw harness benchmark, in a fresh process (run_all.py starts it).

Makes the fixture repository, writes the 40-reply script and the policy, and times
`run_task` end to end: the scripted server on loopback, the real step machine, tools, gates,
git worktree, records. Prints one JSON object on stdout.

    .venv/bin/python bench/perf/ssw_run.py [--profile out.prof]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import common
import task


def _timed(holder: dict[str, float], key: str, fn: Any) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            holder[key] = holder.get(key, 0.0) + time.perf_counter() - began

    return wrapper


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
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="ssw-bench-"))
    repo = task.make_fixture(tmp / "repo")
    script = task.ssw_script()
    script_path = tmp / "script.yaml"
    script_path.write_text(json.dumps(script, indent=1), encoding="utf-8")
    policy_path = tmp / "policy.toml"
    policy_path.write_text(task.POLICY, encoding="utf-8")

    import stepswitch.agent.run as run_mod
    import stepswitch.fakes.loopback as loopback
    import stepswitch.gates.runner as runner
    from stepswitch.agent.run import RunOptions, run_task
    from stepswitch.agent.workspace.paths import Workspace
    from stepswitch.records import RunFolder

    # Gate subprocesses, timed in the run around runner.run_gate (Popen to communicate), the
    # one function every gate command goes through; replaced wherever it was imported by name.
    gate_times: list[float] = []
    gate_calls: list[tuple[str, dict[str, str]]] = []
    original_gate = runner.run_gate

    def run_gate(gate: Any, root: Path, env: dict[str, str]) -> Any:
        began = time.perf_counter()
        try:
            return original_gate(gate, root, env)
        finally:
            gate_times.append(time.perf_counter() - began)
            gate_calls.append((gate.command, dict(env)))

    for module in list(sys.modules.values()):
        if module.__name__.startswith("stepswitch") and vars(module).get("run_gate") is (
            original_gate
        ):
            module.run_gate = run_gate  # type: ignore[attr-defined]

    clock = common.ServerClock()
    clock.instrument(loopback)

    # The scripted server's own life inside run_task (reading the script, starting the server
    # thread, shutting it down, which waits up to its 20 ms poll) is the fake provider, not the
    # harness: it is timed and subtracted like the time inside the server.
    scripted: dict[str, float] = {}
    servers: list[Any] = []
    original_start = run_mod.start_scripted_server

    def start(script_obj: Any) -> Any:
        began = time.perf_counter()
        server, responder = original_start(script_obj)
        server.stop = _timed(scripted, "server_stop_s", server.stop)
        servers.append(server)
        scripted["server_start_s"] = time.perf_counter() - began
        return server, responder

    run_mod.start_scripted_server = start
    run_mod.load_script = _timed(scripted, "load_script_s", run_mod.load_script)
    # git work (gitpython: import on first use, then one git subprocess per operation) stays in
    # the overhead; it is timed only to say how much of it there is.
    git: dict[str, float] = {}
    for name in ("create_worktree", "diff_text", "changed_paths", "commit_all", "remove_worktree"):
        if hasattr(run_mod, name):
            setattr(run_mod, name, _timed(git, name, getattr(run_mod, name)))

    lines: list[str] = []
    options = RunOptions(repo=repo, task=task.TASK, policy_path=policy_path, script=script_path)
    gc_before = [s["collections"] for s in gc.get_stats()]
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    began = time.perf_counter()
    record = run_task(options, lines.append)
    wall = time.perf_counter() - began
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(str(args.profile))
    gc_after = [s["collections"] for s in gc.get_stats()]

    steps = RunFolder(repo / ".ssw" / "runs" / record.run_id).read_steps()
    model_steps = [s for s in steps if s.worker != "-"]
    gate_steps = [s for s in steps if s.step_type == "gates"]
    problems = []
    if record.outcome != "done":
        problems.append(f"outcome {record.outcome}: {record.reason}")
    if record.steps != len(task.TURNS):
        problems.append(f"{record.steps} steps, expected {len(task.TURNS)}")
    if len(gate_steps) != 2 or len(gate_calls) != 2 or "passed" not in gate_steps[-1].note:
        problems.append(f"gates: {[s.note for s in gate_steps]}, {len(gate_calls)} commands")
    for s in model_steps:
        if s.model_output_failure or s.error or any(not t.ok for t in s.tool_calls):
            problems.append(f"step {s.index}: {s.model_dump_json()[:300]}")
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
    overhead = wall - commands_s - server_s - scripted_s
    # Setup: from run_task's start to the first request reaching the server, less the scripted
    # server's own start (already subtracted); the rest of the overhead is the loop and the end.
    to_first = (clock.first_request_at or began) - began
    setup_s = to_first - scripted.get("load_script_s", 0.0) - scripted.get("server_start_s", 0.0)

    bodies = [r.json() for r in servers[0].requests]
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
            "steps": record.steps,
            "wall_s": wall,
            "server_s": server_s,
            "server_requests": clock.requests,
            "scripted_plumbing_s": scripted_s,
            "scripted_plumbing": scripted,
            "commands_s": commands_s,
            "gates_in_run_s": gate_times,
            "gate_commands": [c for c, _ in gate_calls],
            "run_tool_direct": run_tool_detail,
            "cross_check_replay_s": replay_s,
            "overhead_s": overhead,
            "overhead_per_step_ms": overhead / record.steps * 1000,
            "to_first_request_s": setup_s
            + scripted.get("load_script_s", 0.0)
            + scripted.get("server_start_s", 0.0),
            "setup_s": setup_s,
            "after_first_request_per_step_ms": (overhead - setup_s) / record.steps * 1000,
            "git_s": sum(git.values()),
            "git": git,
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
