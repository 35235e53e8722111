"""The tests' `ssw` runner (tests/ssw_cli.py) gives what a fresh `python -m stepswitch` process
gives: the same exit status and output, its own environment and folder, and a timeout that
ends the command."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from tests.ssw_cli import _Zygote, run_ssw_cli


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["bench"],  # its help, exit 2
        ["no-such-command"],
        ["run", "--help"],
        ["run", ".", "--task", "x", "--max-steps", "many"],
        ["models", "--provider", "tokenfactory", "--json"],
    ],
)
def test_a_command_answers_as_a_fresh_process_does(args: list[str], tmp_path: Path) -> None:
    forked, fresh = run_ssw_cli(args, cwd=tmp_path), run_ssw_cli(args, cwd=tmp_path, fresh=True)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        fresh.returncode,
        fresh.stdout,
        fresh.stderr,
    )


def test_the_command_has_its_own_environment_and_folder(tmp_path: Path) -> None:
    env = {**os.environ, "SSW_REGISTRY": "no-registry"}
    forked = run_ssw_cli(["models"], cwd=tmp_path, env=env)
    assert (
        forked.returncode == 2
        and forked.stderr == run_ssw_cli(["models"], cwd=tmp_path, env=env, fresh=True).stderr
    )
    assert "no-registry/providers" in forked.stderr  # a relative path: from the command's folder
    assert run_ssw_cli(["models"], cwd=tmp_path).returncode == 0  # not the earlier environment


def test_a_timeout_ends_the_command_and_the_next_command_runs(tmp_path: Path) -> None:
    # `ssw serve` answers until it is ended.
    with pytest.raises(subprocess.TimeoutExpired) as stopped:
        run_ssw_cli(["serve", "--port", "0"], cwd=tmp_path, timeout=3)
    assert isinstance(stopped.value.output, str)
    url = stopped.value.output.split()[1].rstrip("/")
    host, port = url.removeprefix("http://").split(":")
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((host, int(port)), timeout=10).close()
    assert run_ssw_cli(["--version"]).stdout.startswith("ssw ")


def test_two_answers_that_arrive_together_are_read_one_after_the_other() -> None:
    # A command that ends at once: its pid and its exit status reach the socket together.
    ours, theirs = socket.socketpair()
    with ours, theirs:
        server = _Zygote.__new__(_Zygote)
        server.sock, server.pending = ours, b""
        theirs.sendall(b'{"pid": 7}\n{"exit": 0}\n')
        assert server._answer(5.0) == {"pid": 7}
        assert server._answer(5.0) == {"exit": 0}
        theirs.close()
        assert server._answer(5.0) is None
