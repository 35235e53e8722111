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


NULL_BENCH = (*BENCH, "--sandbox", "none")  # the sandbox and secrets notices come with it


def test_bench_run_on_a_damaged_ledger_is_one_line_before_any_notice(tmp_path: Path):
    out = tmp_path / "bench"
    out.mkdir()
    (out / "ledger.sqlite").write_bytes(b"")
    done = ssw(*NULL_BENCH, "--out", out, cwd=tmp_path)
    assert_one_line(done, f"{out / 'ledger.sqlite'}", "is empty (0 bytes)")


def test_bench_run_out_a_file_is_one_line_before_any_notice(tmp_path: Path):
    out = tmp_path / "a-file"
    out.write_text("not a folder\n")
    done = ssw(*NULL_BENCH, "--out", out, cwd=tmp_path)
    assert_one_line(done, f"--out {out} is a file, not a folder")


def test_bench_run_out_read_only_is_one_line_before_any_notice(tmp_path: Path):
    from tests.test_one_line_errors import unprivileged

    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        done = ssw(*NULL_BENCH, "--out", folder / "b", cwd=tmp_path, prefix=unprivileged())
    finally:
        folder.chmod(0o755)
    assert_one_line(done, f"--out {folder / 'b'}: cannot write in {folder}: Permission denied")


def test_bench_run_workers_past_the_bound_is_one_line_naming_it(tmp_path: Path):
    done = ssw(*BENCH, "--workers", "100000", "--out", tmp_path / "b", cwd=tmp_path)
    assert_one_line(done, "'--workers'", "less than or equal to 64", "(see ssw bench run --help)")
    assert not (tmp_path / "b").exists()


GATE = {".stepswitch.toml": '[gates.check]\ncommand = "true"\n', "calc/ops.py": "X = 1\n"}


def test_gates_on_a_plain_folder_with_no_gates_is_one_line(tmp_path: Path):
    folder = tmp_path / "not-a-repo"
    folder.mkdir()
    done = ssw("gates", folder, cwd=tmp_path)
    assert_one_line(done, f"{folder} is not in a git repository and has no gates to run")
    assert done.stdout == ""


def test_gates_changed_naming_no_file_is_one_line_naming_it(tmp_path: Path):
    from tests.harness.repo import write_repo

    repo = write_repo(tmp_path / "repo", GATE, commit=True)
    done = ssw("gates", repo, "--changed", "no/such/file.py", cwd=tmp_path)
    assert_one_line(done, "--changed no/such/file.py: no such file in", "nor at HEAD")
    assert done.stdout == ""


def test_gates_changed_takes_a_file_deleted_since_head_and_a_new_one(tmp_path: Path):
    from tests.harness.repo import write_repo

    repo = write_repo(tmp_path / "repo", GATE, commit=True)
    (repo / "calc" / "ops.py").unlink()
    (repo / "calc" / "new.py").write_text("Y = 2\n")
    done = ssw("gates", repo, "--changed", "calc/ops.py", "--changed", "calc/new.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "changed: calc/ops.py, calc/new.py" in done.stdout


def test_site_build_says_a_run_whose_record_does_not_load(tmp_path: Path):
    """The page keeps such a run as "no record" (site/sources.py); the build says so and why."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_bytes(b"\x00\xff\xfe")
    done = ssw("site", "build", run, "--out", tmp_path / "site", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"no record: {run / 'run.json'}: cannot read it as JSON" in done.stdout
    assert "(1 run folder(s), 1 task runs, 1 without a record, " in done.stdout
    assert "Traceback" not in done.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def test_gates_on_a_plain_folder_with_gates_refuses_a_changed_file_it_lacks(tmp_path: Path):
    from tests.harness.repo import write_repo

    folder = write_repo(tmp_path / "plain", GATE)  # no git: its gates still run
    assert ssw("gates", folder, "--changed", "calc/ops.py", cwd=tmp_path).returncode == 0
    done = ssw("gates", folder, "--changed", "calc/nope.py", cwd=tmp_path)
    assert_one_line(done, f"--changed calc/nope.py: no such file in {folder.resolve()} (fix: ")
