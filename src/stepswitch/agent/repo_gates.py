"""The gate runner of a repository for `run_task`: its gates, read once at the base commit,
run against the workspace after each edit, full logs kept in the run folder."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from stepswitch.gates.config import GateConfig
from stepswitch.gates.suite import GateSuite, SuiteResult


class RepoGates:
    def __init__(
        self,
        config: GateConfig,
        root: Path,
        env: Mapping[str, str],
        base_commit: str,
        log_dir: Path | None = None,
    ) -> None:
        self.config = config
        self.base_commit = base_commit
        self._suite = GateSuite(config, root, dict(env), log_dir)
        self._preflight = ""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.config.gates)

    @property
    def description(self) -> str:
        if not self.config.gates:
            return "  no gates configured or detected: only the review judges this change"
        lines = [f"  gates ({self.config.source}): {', '.join(self.names)}"]
        lines.append(f"  {self._suite.interpreter_line()}")
        if self._preflight:
            lines.append(f"  {self._preflight}")
        return "\n".join(lines)

    def preflight(self) -> None:
        """Before any paid call: the code the tests import resolves inside the workspace.
        Raises UsageError naming the interpreter and the path when it does not."""
        self._preflight = self._suite.preflight().line()

    def run(self, changed: list[str]) -> SuiteResult:
        return self._suite.run(changed, self.base_commit)
