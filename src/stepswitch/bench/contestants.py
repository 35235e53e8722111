"""Contestants: who runs the tasks. A policy file (real providers, the scripted one with a
script, or the simulated population with a population file), or one of the two built-ins that
check the harness without a model: `oracle` (the reference solution through the agent's own
tools) and `null` (no change). Oracle must pass every valid task and null none; results label
each run with its contestant's kind.

A contestant is picklable (it crosses to worker processes) and makes, per task run, the policy
and the provider factory `run_task` takes. Tests bring their own through the same protocol.
"""

from __future__ import annotations

import os
import re
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from stepswitch.agent.providers import HttpProviders, ProviderFactory
from stepswitch.agent.workers import is_scripted, is_simulated
from stepswitch.bench.oracle import BuiltinProvider, reference_change
from stepswitch.bench.results import ContestantKind
from stepswitch.bench.sim_reference import task_reference
from stepswitch.bench.task import Task
from stepswitch.errors import UsageError
from stepswitch.fakes.scripted import load_script, start_scripted_server
from stepswitch.policy.model import Policy, load_policy, validate_policy
from stepswitch.registry.presets import SCRIPTED_PROVIDER, SIM_PROVIDER, ProviderSpec
from stepswitch.registry.trust import Trust, check_destinations, worker_destinations
from stepswitch.sim.population import load_population
from stepswitch.sim.server import start_sim_server
from stepswitch.util.keys import held_keys

BUILTINS: tuple[str, ...] = ("oracle", "null")
LABELS: dict[str, str] = {
    "oracle": "built-in, no model: applies the task's reference solution through the agent's "
    "tools (checks the harness: must pass every valid task)",
    "null": "built-in, no model: changes nothing (checks the harness: must pass no task)",
    "policy": "a routing policy",
    "simulated": "a routing policy on the simulated population (no model is called: its runs "
    "show the routing under the population file's stated assumptions, never a model)",
}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

_keys: dict[str, str] = {}  # provider keys handed to a worker process (executor.py)


def set_keys(keys: dict[str, str]) -> None:
    _keys.clear()
    _keys.update(keys)


def provider_env() -> dict[str, str]:
    """Where provider keys come from: this process's environment, the keys `ssw`'s start took
    out of it (util.keys), and those the bench's main process handed to this worker."""
    return {**os.environ, **held_keys(), **_keys}


@dataclass(frozen=True)
class TaskRunPlace:
    """Where one task run of a contestant happens: its task, the checkout the agent works in, a
    scratch folder, the providers' registry, what closes with the run, and which attempt it is
    (a simulated population is seeded by it)."""

    task: Task
    checkout: Path
    scratch: Path
    registry: dict[str, ProviderSpec]
    stack: ExitStack
    attempt: int = 1


class Contestant(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> ContestantKind: ...

    @property
    def policy_path(self) -> str: ...  # as recorded in run.json ("builtin:oracle" for those)

    def load_policy(self) -> Policy: ...

    def providers(self, place: TaskRunPlace) -> ProviderFactory: ...


def builtin_policy(name: str) -> Policy:
    """One worker on the scripted preset ($0, and every record says scripted) takes every
    step and reviews; the step machine, tools, gates and ledger are the real ones."""
    worker = {"provider": SCRIPTED_PROVIDER, "model": "scripted-small"}
    data = {
        "workers": {name: {**worker, "max_output_tokens": 1024, "timeout": 30}},
        "rules": [{"worker": name}],
        "escalation": {"ladder": [name]},
        "limits": {"max_steps": 40, "steps_per_rung": 40, "wall_time_s": 1800},
        "review": {"reviewer": name},
    }
    return validate_policy(data, f"builtin:{name}")


@dataclass(frozen=True)
class BuiltinContestant:
    name: str  # oracle | null

    @property
    def kind(self) -> ContestantKind:
        return "oracle" if self.name == "oracle" else "null"

    @property
    def policy_path(self) -> str:
        return f"builtin:{self.name}"

    def load_policy(self) -> Policy:
        return builtin_policy(self.name)

    def providers(self, place: TaskRunPlace) -> ProviderFactory:
        if self.kind != "oracle":
            return BuiltinProvider(self.name, None)
        change = reference_change(place.task, place.checkout, place.scratch)
        return BuiltinProvider(self.name, change)


@dataclass(frozen=True)
class PolicyContestant:
    name: str
    path: str  # the policy file as given (relative to where the bench runs)
    script: str | None = None  # replies for workers on the scripted provider, per task run
    population: str | None = None  # the simulated population its `sim` workers meet (ADR 0053)
    trust: Trust = field(default_factory=Trust)  # hosts the user trusts with a key (ADR 0048)

    @property
    def kind(self) -> ContestantKind:
        return "policy"

    @property
    def policy_path(self) -> str:
        return self.path

    def load_policy(self) -> Policy:
        return load_policy(Path(self.path))

    def providers(self, place: TaskRunPlace) -> ProviderFactory:
        stack = place.stack
        base_urls = {}
        if self.script is not None:
            # The script starts over for every task run: each gets its own loopback server.
            server, _ = start_scripted_server(load_script(Path(self.script)))
            stack.callback(server.stop)
            base_urls[SCRIPTED_PROVIDER] = server.base_url
        if self.population is not None:
            # Its own population server per task run, knowing this task's reference change and
            # seeded by the run's attempt: the same file plays the same runs.
            ref = task_reference(place.task, place.checkout, place.scratch)
            population = load_population(Path(self.population))
            sim, _ = start_sim_server(population, ref, place.attempt)
            stack.callback(sim.stop)
            base_urls[SIM_PROVIDER] = sim.base_url
        providers = HttpProviders(
            place.registry, env=provider_env(), base_urls=base_urls, trust=self.trust
        )
        stack.callback(providers.close)
        return providers


def _shown(path: Path) -> str:
    """A path relative to the working folder when it is inside it, else as given."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def parse_contestants(
    specs: list[str],
    scripts: dict[str, Path],
    population: Path | None = None,
    trust: Trust | None = None,
) -> list[Contestant]:
    """`oracle`, `null` or a policy file (named by its file's stem); `scripts` maps a policy
    contestant's name to its script; `population` is what the policies' `sim` workers meet;
    `trust`, the hosts the user trusts with a key. Every problem is a UsageError before
    anything runs."""
    if population is not None:
        load_population(population)  # a ConfigError names the key
    simulated = False
    if not specs:
        raise UsageError("name at least one --contestant: oracle, null or a policy file")
    found: list[Contestant] = []
    for spec in specs:
        if spec in BUILTINS:
            found.append(BuiltinContestant(spec))
            continue
        path = Path(spec)
        name = path.stem
        if not path.is_file():
            raise UsageError(
                f"--contestant {spec!r}: no such policy file; use oracle, null or a .toml policy"
            )
        if name in BUILTINS or not _NAME.match(name):
            raise UsageError(
                f"--contestant {spec!r}: a policy's name is its file's stem, and {name!r} "
                "cannot be one (a built-in's name, or not letters, digits, '.', '_', '-')"
            )
        policy = load_policy(path)  # a ConfigError names the key
        script = scripts.get(name)
        if is_scripted(policy) and script is None:
            raise UsageError(
                f"--contestant {spec!r} uses the scripted provider: pass --script {name}=FILE"
            )
        if script is not None:
            load_script(script)
        sim = is_simulated(policy)
        if sim and population is None:
            raise UsageError(
                f"--contestant {spec!r} uses the simulated population (provider sim): pass "
                "--sim-population FILE, e.g. bench/routing/population.toml"
            )
        simulated = simulated or sim
        found.append(
            PolicyContestant(
                name,
                _shown(path),
                _shown(script) if script else None,
                _shown(population) if sim and population is not None else None,
                trust or Trust(),
            )
        )
    names = [c.name for c in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"contestants given twice: {', '.join(twice)} (names are file stems)")
    if population is not None and not simulated:
        raise UsageError("--sim-population: no contestant has a worker on provider sim")
    unused = sorted(set(scripts) - set(names))
    if unused:
        raise UsageError(f"--script names no contestant: {', '.join(unused)}")
    return found


def keys_line(
    contestants: list[Contestant], registry: dict[str, ProviderSpec], trust: Trust
) -> str | None:
    """Every policy contestant's workers checked against the hosts the user trusts
    (registry/trust.py): the line naming each host that will receive a key, or None."""
    destinations = [
        destination
        for contestant in contestants
        if isinstance(contestant, PolicyContestant)
        for destination in worker_destinations(contestant.load_policy().workers, registry)
    ]
    return check_destinations(destinations, trust)
