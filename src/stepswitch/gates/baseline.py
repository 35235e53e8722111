"""The pre-flight's verdict on the untouched start tree (gates.preflight makes it): each gate's
result as plain data for run.json, and what the run's start says of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

from stepswitch.gates.interpreter import ImportCheck

COLLECT = "collect"  # the tests gate's pre-flight stage: "<gate>:collect"


@dataclass(frozen=True)
class BaselineGate:
    """One gate's verdict on the untouched tree: plain data for run.json."""

    name: str  # the gate; "<tests gate>:collect" for the tests gate, which is only collected
    passed: bool
    duration_s: float
    report: str  # the short report, as the model would see it

    def as_record(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Baseline:
    gates: tuple[BaselineGate, ...]  # in the configured order; the truth check only if failing
    imports: ImportCheck | None = None
    base_commit: str = ""
    call_map: str = ""  # what the pre-flight says of the call map (gates.callmap)
    # Command gates failing before any edit whose findings could be read: how many there were.
    judged: Mapping[str, int] = field(default_factory=dict)
    # Suite gates failing before any edit whose failing tests could be read: how many there were.
    judged_tests: Mapping[str, int] = field(default_factory=dict)
    reused_from: str = ""  # the run whose pre-flight this is, when kept for the same base commit

    @property
    def already_failing(self) -> tuple[BaselineGate, ...]:
        """Gates other than the tests' collection that fail before any edit."""
        return tuple(g for g in self.gates if not g.passed and not is_collect(g.name))

    def lines(self) -> list[str]:
        """What the run's start says of the pre-flight (without the import line)."""
        if not self.gates:
            return []
        shown = ", ".join(_summary(g, timed=not self.reused_from) for g in self.gates)
        out = [f"gates: before any edit: {shown}"]
        if self.reused_from:
            out.insert(
                0,
                f"pre-flight: reused from run {self.reused_from} (the same base commit "
                f"{self.base_commit[:12]} and environment: no gate ran again)",
            )
        if self.call_map:
            out.append(self.call_map)
        for gate in self.already_failing:
            out.append(f"gates: {gate.name} already fails before any edit{self._judged(gate)}")
        return out

    def _judged(self, gate: BaselineGate) -> str:
        """How a change is judged by a gate that fails before it: by the failing tests or the
        findings it adds when they could be read, else it must fix the gate."""
        if gate.name in self.judged_tests:
            count, what = self.judged_tests[gate.name], "failing test(s)"
        elif gate.name in self.judged:
            count, what = self.judged[gate.name], "finding(s)"
        else:
            return f", so the change must also fix it: {detail_line(gate.report)}"
        return (
            f" ({count} {what}), so the change is judged by the {what.replace('(s)', 's')} it adds"
        )

    def records(self) -> list[dict[str, object]]:
        return [g.as_record() for g in self.gates]


def is_collect(name: str) -> bool:
    return name.endswith(f":{COLLECT}")


def _summary(gate: BaselineGate, timed: bool = True) -> str:
    seconds = f" ({gate.duration_s:.2f} s)" if timed else ""
    if is_collect(gate.name):
        return f"{gate.name.removesuffix(':' + COLLECT)} {detail_line(gate.report)}{seconds}"
    return f"{gate.name} {'passed' if gate.passed else 'FAILED'}{seconds}"


def detail_line(report: str) -> str:
    """The first line of a report after its headline (the headline itself when alone)."""
    lines = [line.strip() for line in report.splitlines() if line.strip()]
    if not lines:
        return "no output"
    head = lines[0].split(": ", 1)[-1]
    return lines[1] if len(lines) > 1 else head
