"""What `ssw probe` found, as data: one result per check, written to
registry/probes/<provider>/<model>.json, summed up in a table and an exit code."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from stepswitch.util.text import escape_json_controls

TRANSIENT = "unknown: transient error"  # how a check left unknown by a 429, 5xx or timeout begins


class ProbeResult(BaseModel):
    name: str
    ok: bool | None  # None: not applicable, or not measurable on this provider
    detail: str = ""
    registry_claims: bool | None = None  # what the registry says; None when it does not say
    status: int | None = None  # HTTP status of a refusal
    latency_s: float | None = None
    measured: dict[str, int | float] = Field(default_factory=dict)
    usage_keys: list[str] = Field(default_factory=list)


class ProbeReport(BaseModel):
    schema_version: Literal[1] = 1
    provider: str
    model: str
    base_url: str
    wire_format: str
    probed_at: str
    calls: int = 0  # HTTP attempts that left the machine
    results: list[ProbeResult] = Field(default_factory=list)

    def result(self, name: str) -> ProbeResult:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(f"no check named {name!r} in this probe")


def probe_path(root: Path, provider: str, model_id: str) -> Path:
    return root / "probes" / provider / f"{model_id.replace('/', '__')}.json"


def write_probe(report: ProbeReport, root: Path) -> Path:
    path = probe_path(root, report.provider, report.model)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(escape_json_controls(report.model_dump_json(indent=2)) + "\n", encoding="utf-8")
    return path


def failed_claims(report: ProbeReport) -> list[str]:
    """Checks of what the registry says the model does that came back failed."""
    return [r.name for r in report.results if r.ok is False and r.registry_claims]


def probe_exit_code(report: ProbeReport) -> int:
    """1 when a check the registry claims failed, or when no check passed at all; else 0."""
    passed = any(r.ok for r in report.results)
    return 1 if failed_claims(report) or not passed else 0


def probe_verdict(report: ProbeReport) -> list[str]:
    """What the checks add up to: claims not found, checks left unknown, nothing passed."""
    lines = []
    failed = failed_claims(report)
    if failed:
        lines.append(
            f"the registry claims what these checks did not find: {', '.join(failed)} "
            f"(fix: correct registry/providers/{report.provider}.toml, or the server)"
        )
    unknown = [r.name for r in report.results if r.detail.startswith(TRANSIENT)]
    if unknown:
        lines.append(
            f"unknown after transient errors (429, 5xx, timeouts): {', '.join(unknown)}; "
            "probe again later"
        )
    if not any(r.ok for r in report.results):
        lines.append("no check passed")
    return lines


def _mark(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "NO")


CHECK_WIDTH = len("parallel_tool_calls")  # the longest fixed check name


def check_header(width: int = CHECK_WIDTH) -> str:
    return f"{'check':<{width}}  ok   registry  detail"


def format_check(r: ProbeResult, width: int = CHECK_WIDTH) -> str:
    """One check's line: its name, whether it held, what the registry says, and why."""
    detail = r.detail if len(r.detail) <= 100 else r.detail[:97] + "..."
    return f"{r.name:<{width}}  {_mark(r.ok):<3}  {_mark(r.registry_claims):<8}  {detail}"


def format_probe_summary(report: ProbeReport) -> str:
    head = (
        f"probe {report.provider} / {report.model} ({report.wire_format}) at {report.base_url}, "
        f"{report.probed_at}, {report.calls} calls"
    )
    width = max(len(r.name) for r in report.results) if report.results else 5
    lines = [head, check_header(width), *(format_check(r, width) for r in report.results)]
    return "\n".join(lines + probe_verdict(report))
