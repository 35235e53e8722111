"""One repetition of the mini-swe-agent benchmark, in a fresh process of its own venv.

mini-swe-agent's Python API as its `mini` command wires it, minus the interactive layer:
DefaultAgent + LocalEnvironment + LitellmModel (tool calls: one `bash` tool), configured from
the package's own mini.yaml (templates, environment variables, model_kwargs). The model is
litellm's `openai/` provider pointed at stepswitch's loopback server in this process, answering
40 scripted turns; the 40th is mini's submit command. Prints one JSON object on stdout.

    bench/perf/.venv-mini/bin/python bench/perf/mini_run.py
"""

from __future__ import annotations

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

MODEL = "openai/bench-mini"
# A price litellm can look up, so its cost calculation succeeds on every call. It must be above
# zero: mini's LitellmModel treats a cost <= 0 as an error (and with cost_tracking
# "ignore_errors" would raise and catch one per call). 1e-9 $/token is as good as free.
PRICE_PER_TOKEN = 1e-9


class Responder:
    """The turns' bash commands as chat-completions tool calls, one per request, with usage
    estimated like stepswitch's scripted provider (4 characters a token; cached = the part of
    json.dumps(messages) that repeats the previous prompt)."""

    def __init__(self, loopback: Any) -> None:
        self.loopback = loopback
        self.turns = task.TURNS
        self.served = 0
        self.last_prompt = ""
        self.prompt_tokens: list[int] = []
        self.cached_tokens: list[int] = []

    def __call__(self, request: Any) -> Any:
        body = request.json()
        if self.served >= len(self.turns):
            return self.loopback.Reply(400, {"error": {"message": "script exhausted"}})
        _, thought, _, command = self.turns[self.served]
        self.served += 1
        prompt = json.dumps(body.get("messages", []))
        same = common.common_prefix_len(prompt, self.last_prompt)
        self.last_prompt = prompt
        call = {
            "id": f"call_{self.served}",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": command})},
        }
        prompt_tokens = common.tokens(len(prompt))
        cached = min(prompt_tokens, same // 4)
        completion = common.tokens(len(thought) + len(json.dumps([call])))
        self.prompt_tokens.append(prompt_tokens)
        self.cached_tokens.append(cached)
        return self.loopback.Reply(
            body={
                "id": f"bench-{self.served}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", ""),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": thought, "tool_calls": [call]},
                        "finish_reason": "tool_calls",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion,
                    "total_tokens": prompt_tokens + completion,
                    "prompt_tokens_details": {"cached_tokens": cached},
                },
            }
        )


def _replay(env: dict[str, str], repeats: int = 3) -> float:
    """Cross-check: the 40 commands replayed directly with Popen (shell=True, as mini runs them)
    in a fresh copy of the fixture, in order; median of the replays' sums."""
    sums = []
    for _ in range(repeats):
        root = Path(tempfile.mkdtemp(prefix="mini-replay-")) / "repo"
        task.make_fixture(root)
        sums.append(
            sum(common.time_command(c, root, env, shell_list=False) for c in task.mini_commands())
        )
        shutil.rmtree(root.parent, ignore_errors=True)
    return statistics.median(sums)


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="mini-bench-"))
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # no price-map download at import
    os.environ["MSWEA_SILENT_STARTUP"] = "1"
    os.environ["MSWEA_GLOBAL_CONFIG_DIR"] = str(tmp / "mswea-config")
    repo = task.make_fixture(tmp / "repo")

    loopback = common.load_loopback_by_path()
    clock = common.ServerClock()
    clock.instrument(loopback)
    responder = Responder(loopback)
    server = loopback.LoopbackServer(responder).start()

    import gc

    import minisweagent
    import minisweagent.environments.local as local
    import yaml
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models.litellm_model import LitellmModel

    # The commands' own time, as mini runs them: its _run (Popen to communicate), timed in the run.
    command_times: list[float] = []
    original_run = local._run

    def timed_run(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return original_run(*args, **kwargs)
        finally:
            command_times.append(time.perf_counter() - began)

    local._run = timed_run

    config = yaml.safe_load((Path(minisweagent.package_dir) / "config" / "mini.yaml").read_text())
    registry = tmp / "model_registry.json"
    # Registered under both names: litellm prices a call by the name it was asked for
    # ("openai/bench-mini") and by the one the server answers with ("bench-mini"), and an
    # unknown answer name costs a failed provider lookup (and a printed warning) on every call,
    # which a known model such as gpt-4o-mini does not.
    entry = {
        "max_tokens": 8192,
        "max_input_tokens": 128000,
        "max_output_tokens": 8192,
        "input_cost_per_token": PRICE_PER_TOKEN,
        "output_cost_per_token": PRICE_PER_TOKEN,
        "litellm_provider": "openai",
        "mode": "chat",
    }
    registry.write_text(json.dumps({MODEL: entry, MODEL.split("/", 1)[1]: entry}))
    model_config = dict(config["model"])
    model_config["model_kwargs"] = {
        **model_config.get("model_kwargs", {}),
        "api_base": server.base_url.rstrip("/"),
        "api_key": "bench-no-key",
    }
    model = LitellmModel(model_name=MODEL, litellm_model_registry=str(registry), **model_config)
    env = LocalEnvironment(cwd=str(repo), **config["environment"])
    agent_keys = ("system_template", "instance_template", "step_limit", "cost_limit")
    agent = DefaultAgent(model, env, **{k: config["agent"][k] for k in agent_keys})

    gc_before = [s["collections"] for s in gc.get_stats()]
    began = time.perf_counter()
    result = agent.run(task.TASK)
    wall = time.perf_counter() - began
    gc_after = [s["collections"] for s in gc.get_stats()]
    server.stop()

    if result.get("exit_status") != "Submitted" or agent.n_calls != len(task.TURNS):
        last = agent.messages[-3:]
        raise SystemExit(f"mini's run went wrong: {result} after {agent.n_calls} calls: {last}")
    if len(command_times) != len(task.TURNS):
        raise SystemExit(f"{len(command_times)} commands ran, expected {len(task.TURNS)}")
    bad = [m for m in agent.messages if m.get("role") == "tool" and m["extra"]["returncode"] != 0]
    if bad:
        raise SystemExit(f"a command failed: {bad[0]['content'][:500]}")

    commands_s = sum(command_times)
    replay_s = _replay(os.environ | config["environment"].get("env", {}))
    overhead = wall - commands_s - clock.total_s
    setup_s = (clock.first_request_at or began) - began  # agent.run() start to the first request
    common.emit(
        {
            "agent": "mini-swe-agent",
            "mini_version": minisweagent.__version__,
            "litellm_version": _version("litellm"),
            "python": sys.version.split()[0],
            "steps": agent.n_calls,
            "wall_s": wall,
            "server_s": clock.total_s,
            "server_requests": clock.requests,
            "commands_s": commands_s,
            "commands_in_run_ms": [t * 1000 for t in command_times],  # raw (ADR 0026)
            "cross_check_replay_s": replay_s,
            "overhead_s": overhead,
            "overhead_per_step_ms": overhead / agent.n_calls * 1000,
            "to_first_request_s": setup_s,
            "setup_s": setup_s,
            "after_first_request_per_step_ms": (overhead - setup_s) / agent.n_calls * 1000,
            "gc_collections": [a - b for a, b in zip(gc_after, gc_before, strict=True)],
            "prompt": {
                "prompt_tokens": responder.prompt_tokens,
                "cached_tokens": responder.cached_tokens,
            },
        }
    )
    shutil.rmtree(tmp, ignore_errors=True)


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    main()
