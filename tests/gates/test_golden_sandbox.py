"""A golden gate inside the run's sandbox, on every backend the machine has: the values the
command prints reach the host (the sandbox's /tmp is its own, so they cannot go through the
host's), right values pass, wrong ones fail, and a command that swaps its output file for a link
to a host file gets a failing verdict, not the host file's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepswitch.errors import UsageError
from stepswitch.gates.config import GoldenGate
from stepswitch.gates.suite import GateSuite
from stepswitch.util.sandbox import NoSandbox, choose_sandbox
from tests.gates import confined_suite
from tests.harness.repo import write_repo

EXPECTED = '{"energy": 1.5, "steps": 3}\n'


def _suite(tmp_path: Path, backend: str, command: str) -> GateSuite:
    sandbox = NoSandbox() if backend == "none" else None
    if sandbox is None:
        try:
            sandbox = choose_sandbox(backend)
        except UsageError as exc:
            pytest.skip(str(exc))
    root = write_repo(tmp_path / "repo", {"golden/values.json": EXPECTED}, commit=True)
    gate = GoldenGate(
        name="energies", kind="golden", expected="golden/values.json", command=command
    )
    return confined_suite(tmp_path, root, gate, sandbox)


@pytest.mark.parametrize("backend", ["bwrap", "unshare", "none"])
def test_right_values_pass_and_wrong_ones_fail_inside_the_sandbox(
    tmp_path: Path, backend: str
) -> None:
    right = _suite(tmp_path / "right", backend, """printf '{"energy": 1.5, "steps": 3}'""")
    wrong = _suite(tmp_path / "wrong", backend, """printf '{"energy": 1.7, "steps": 3}'""")

    passed, failed = right.run(None), wrong.run(None)

    assert passed.passed, passed.report
    assert not failed.passed and "energy" in failed.report and "empty" not in failed.report


@pytest.mark.parametrize("backend", ["bwrap", "unshare"])
def test_an_output_file_swapped_for_a_link_is_a_failure_not_a_host_read(
    tmp_path: Path, backend: str
) -> None:
    secret = tmp_path / "host-secret.json"
    secret.write_text('{"energy": 1.5, "steps": 3, "token": "canary-77"}\n')
    # Inside the sandbox the host file is not there, but a link to its path is read on the host.
    swap = f'for f in "$TMPDIR"/ssw-golden-*; do rm -f "$f"; ln -s {secret} "$f"; done; printf x'
    suite = _suite(tmp_path, backend, swap)

    result = suite.run(None)

    assert not result.passed
    assert "canary-77" not in result.report and "could not be read back" in result.report
