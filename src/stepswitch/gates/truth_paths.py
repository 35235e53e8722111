"""The paths the gates' truth lives in: the gate configuration, the golden files and the
protected paths, which the agent's tools refuse to write and whose change fails the gates."""

from __future__ import annotations

from stepswitch.gates.config import OWN_FILE, GateConfig, GoldenGate, ProtectedGate


def protected_patterns(config: GateConfig) -> dict[str, str]:
    """The paths the gates' truth lives in, each with why: the gate configuration (and
    .stepswitch.toml, so a model cannot add one), the golden files and the protected paths. The
    tools refuse writes to them; any change to them fails the gates."""
    out: dict[str, str] = {OWN_FILE: "where the gates are configured"}
    if config.config_file and config.config_file != OWN_FILE:
        out[config.config_file] = "where the gates are configured"
    for gate in config.gates:
        if isinstance(gate, GoldenGate):
            out.setdefault(gate.expected, f"the golden file of gate {gate.name}")
        elif isinstance(gate, ProtectedGate):
            for pattern in gate.paths:
                out.setdefault(pattern, f"protected by gate {gate.name} ({pattern!r})")
    return out


def protected_paths(config: GateConfig) -> tuple[str, ...]:
    """Globs for Workspace.protected: the keys of `protected_patterns`."""
    return tuple(protected_patterns(config))
