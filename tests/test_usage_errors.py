"""Issue 22: bad values and unknown names on the command line, as `ssw` meets them in a real
process: one line `ssw: <what is wrong> (see ssw <command> --help)` on stderr, exit 2, nothing on
stdout, never Click's usage block; `--help` itself unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_one_line_errors import REPO, assert_one_line, ssw

SUITE = REPO / "bench" / "suites" / "general"
BENCH = ("bench", "run", "--suite", str(SUITE), "--contestant", "null")
RUN = ("run", ".", "--policy", "p.toml", "--task", "t")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ((*BENCH, "--workers", "0"), ["'--workers'", "greater than or equal to 1"]),
        ((*BENCH, "--workers", "-1"), ["'--workers'", "greater than or equal to 1"]),
        ((*BENCH, "--workers", "abc"), ["'--workers'", "valid integer"]),
        ((*BENCH, "--runs-per-task", "0"), ["'--runs-per-task'", "greater than or equal to 1"]),
        ((*BENCH, "--contestant"), ["'--contestant' requires an argument"]),
        ((*RUN, "--budget-usd", "abc"), ["'--budget-usd'", "valid number"]),
        ((*RUN, "--max-steps", "1.5"), ["'--max-steps'", "valid integer"]),
        (("serve", "--port", "-1"), ["'--port'", "greater than or equal to 0"]),
        (("serve", "--port", "70000"), ["'--port'", "less than or equal to 65535"]),
        (("serve", "--port", "abc"), ["'--port'", "valid integer"]),
        (("no-such-command",), ["No such command 'no-such-command'"]),
        (("bench", "no-such-command"), ["No such command 'no-such-command'"]),
        (("models", "--no-such-option"), ["No such option: --no-such-option"]),
        (("gates",), ["Missing argument"]),
    ],
)
def test_a_usage_error_is_one_line_naming_the_option_and_the_help(
    tmp_path: Path, args: tuple[str, ...], words: list[str]
):
    done = ssw(*args, cwd=tmp_path)
    command = [a for a in args if a in ("bench", "run", "serve", "models", "gates")]
    where = "ssw " + " ".join(command) if command else "ssw"
    assert_one_line(done, *words, f"(see {where} --help)")
    assert "Usage:" not in done.stderr
    assert done.stdout == ""


def test_help_is_unchanged(tmp_path: Path):
    done = ssw("bench", "run", "--help", cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("Usage: ") and "--workers" in done.stdout
    alone = ssw("bench", cwd=tmp_path)  # a group alone prints its help, as before
    assert alone.returncode == 2 and alone.stderr.startswith("Usage: ")
    assert "Commands:" in alone.stderr


def test_serve_on_a_host_it_cannot_listen_on_is_one_line_without_the_warning(tmp_path: Path):
    # 192.0.2.1 (TEST-NET-1, RFC 5737) is no address of this machine: the bind fails, no DNS asked.
    done = ssw("serve", "--host", "192.0.2.1", "--port", "0", cwd=tmp_path)
    assert_one_line(done, "cannot listen on 192.0.2.1:0")
    assert "warning" not in done.stderr and done.stdout == ""
