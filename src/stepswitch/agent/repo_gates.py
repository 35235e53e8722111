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

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.config.gates)

    @property
    def description(self) -> str:
        if not self.config.gates:
            return "  no gates configured or detected: only the review judges this change"
        return f"  gates ({self.config.source}): {', '.join(self.names)}"

    def run(self, changed: list[str]) -> SuiteResult:
        return self._suite.run(changed, self.base_commit)
