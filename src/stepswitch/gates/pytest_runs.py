"""How each pytest of the tests gate runs: its environment, and forked from the warm pytest
(`gates.warm`) when that can stand in for the tests command, else the command as written.

The stages run the project's own pytest collection with the `ssw_select` plugin
(stepswitch/gates/ssw_pytest/), which leaves the other test modules out and orders the items, so
`python_files`, `testpaths`, conftest files and collection hooks all apply as in the full suite.
pytest is configured as at the base commit (`gates.test_config.pin_test_config`).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

from stepswitch.gates.config import TestsGate
from stepswitch.gates.context import GateContext
from stepswitch.gates.report import gate_report
from stepswitch.gates.runner import LOG_CAP_CHARS, Gate, GateResult, gate_result
from stepswitch.gates.test_config import pin_test_config
from stepswitch.gates.warm import WarmPytest, WarmStarter, pytest_args

PYTEST_NO_TESTS = 5  # pytest's exit status when it collected nothing
TEST_COLUMNS = 200


def add_pytest_options(env: dict[str, str], words: str) -> None:
    """`words` after the options `env`'s PYTEST_ADDOPTS already gives (any pytest the tests
    command starts takes them)."""
    env["PYTEST_ADDOPTS"] = f"{env.get('PYTEST_ADDOPTS', '')} {words}".strip()


@dataclass
class PytestRuns:
    """The pytest runs of one suite's tests gate, and the warm pytest they fork from."""

    context: GateContext
    warm: WarmPytest | None = None  # started for the next gate run's stages
    warm_off: str = ""  # why no warm pytest is started any more
    start_warm: WarmStarter = WarmPytest  # what starts one (injectable: tests count the starts)

    def pytest_env(self) -> dict[str, str]:
        """The environment of every test stage but the two names each stage sets."""
        # No plugin the tree carries: autoload off, the declared ones named (gates.plugins).
        env = self.context.pytest_env()
        # pytest cuts its summary lines to the terminal width; without a terminal that is 80.
        env.setdefault("COLUMNS", str(TEST_COLUMNS))
        return env

    def stage_env(
        self,
        spec: dict[str, object],
        folder: Path,
        base: str = "HEAD",
        notes: list[str] | None = None,
        root: Path | None = None,
    ) -> dict[str, str]:
        """A stage's environment: its selection in `folder`, and pytest's configuration from
        the base commit (gates.test_config), said in `notes`, rooted at `root` (the folder the
        stage runs in: the worktree unless given)."""
        spec_path = folder / "select.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        env = self.pytest_env()
        # In PYTEST_ADDOPTS, so that any pytest the tests command starts takes them.
        where = root if root is not None else self.context.root
        pinned = pin_test_config(self.context.base, where, base, self.context.confinement, folder)
        if pinned is not None:
            add_pytest_options(env, shlex.join(pinned.args))
        if pinned is not None and notes is not None:
            notes.append(pinned.note)
        env["SSW_SELECT"] = str(spec_path)
        return env

    # -- the warm pytest (gates.warm) -----------------------------------------------------------

    def warm_args(self, gate: TestsGate) -> list[str] | None:
        return self.pytest_words(gate) if gate.warm else None

    def pytest_words(self, gate: TestsGate) -> list[str] | None:
        """pytest's arguments when the stage command is one `<python> -m pytest ...` of the
        gates' interpreter (warm or fresh, the stage is then one pytest session), else None."""
        return pytest_args(
            gate.stage_command(None), self.context.interpreter.python, self.context.gate_env
        )

    def warm_up(self, gate: TestsGate | None) -> None:
        """Start the warm pytest the next gate run's stages fork from, unless one is running or
        the tests gate's command is not one it can stand in for."""
        if self.warm_off or self.warm is not None or gate is None:
            return
        if self.warm_args(gate) is not None:
            env = self.pytest_env()
            context = self.context
            self.warm = self.start_warm(
                context.interpreter.python, env, context.root, context.confinement
            )

    def warm_line(self, gate: TestsGate | None) -> str:
        """`gates: warm pytest: ...`, for the run's start: whether the test stages fork from a
        warm pytest, and why not (waits for the one starting to be ready)."""
        if gate is None:
            return ""
        if not gate.warm:
            return "gates: warm pytest: off (warm = false)"
        if self.warm_args(gate) is None:
            return (
                "gates: warm pytest: not used, the tests command is not "
                f"`{self.context.interpreter.python} -m pytest ...`"
            )
        if self.warm_off:
            return f"gates: warm pytest: {self.warm_off}"
        if self.warm_ready():
            return "gates: warm pytest: ready, the test stages of each gate run fork from it"
        return f"gates: warm pytest: {self.warm.why if self.warm else 'not started'}"

    def warm_ready(self) -> bool:
        """Wait until the warm pytest has started; whether it can stand in for the stages."""
        return self.warm is not None and self.warm.ready()

    def end_of_run(self) -> None:
        """End the warm pytest of the gate run that ended: nothing a test did in it reaches the
        next run."""
        warm, self.warm = self.warm, None
        if warm is not None:
            if warm.why.startswith("is not used"):  # refused at start-up: it would again
                self.warm_off = warm.why
            warm.close()

    def close(self) -> None:
        """End the warm pytest, if it runs."""
        warm, self.warm = self.warm, None
        if warm is not None:
            warm.close()

    # -- one stage ------------------------------------------------------------------------------

    def collect(self, gate: TestsGate, name: str) -> GateResult:
        """The tests gate's collection alone (`--collect-only -q`) in the worktree, forked from
        the warm pytest when one runs (the pre-flight's)."""
        env = self.pytest_env()
        add_pytest_options(env, "--collect-only -q")
        return self.run(gate, name, False, env, [])[0]

    def run(
        self,
        gate: TestsGate,
        name: str,
        selected: bool,
        env: dict[str, str],
        notes: list[str],
        timeout_s: float | None = None,
    ) -> tuple[GateResult, bool]:
        """One stage's pytest, and whether it was forked from the warm pytest (when it can stand
        in), else the stage command as written; why not goes to `notes` and the stage's log.
        `selected`: a selection, where "no tests" (exit 5) passes. `timeout_s`: the gate's own
        unless given."""
        command = gate.stage_command(None)
        timeout = gate.timeout_s if timeout_s is None else timeout_s
        args = self.warm_args(gate)
        if self.warm is not None and args is not None:
            done = self.warm.run(args, env, timeout, LOG_CAP_CHARS)
            if done is not None:
                if selected and done.exit_code == PYTEST_NO_TESTS:
                    done = replace(done, exit_code=0)
                result = gate_result(Gate(name, command, timeout), done)
                return replace(result, report=gate_report(result)), True
            why = f"{name} ran as a fresh pytest: the warm pytest {self.warm.why}"
            notes.append(why)
            if self.warm.why.startswith("is not used"):
                self.warm_off = self.warm.why  # it would say so again: no more this task
            self.warm.close()
            self.warm = None
        else:
            why = ""
        if selected:
            command = (
                f"{command}\nstatus=$?\n"
                f'[ "$status" -eq {PYTEST_NO_TESTS} ] && exit 0\nexit "$status"'
            )
        result = self.context.command(name, command, timeout, env)
        return (replace(result, log=f"[ssw: {why}]\n{result.log}") if why else result), False
