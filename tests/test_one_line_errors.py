"""Where a traceback used to be, one line: every `--out` that is a file or cannot be written in,
and a claims.yaml that is binary or not UTF-8, as `ssw` meets them in a real process (exit 2);
and the output reader of a command interrupted by Ctrl-C, which ends without a thread traceback."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from stepswitch.util.proc import run_in_group
from tests.harness.cli import run_ssw_cli, wait_for

REPO = Path(__file__).resolve().parents[1]
RUNS = REPO / "docs" / "runs"  # committed runs: what `ssw site build` reads
BINARY = b"\x7fELF\x02\x01\x01\x00\x00\xff\xfegarbage"
NOT_UTF8 = b'claims:\n  - id: "caf\xe9"\n'


def ssw(*args: str | Path, cwd: Path, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if not prefix:
        return run_ssw_cli(args, cwd=cwd, env=env, timeout=120)
    return subprocess.run(
        [*prefix, sys.executable, "-m", "stepswitch", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def assert_one_line(done: subprocess.CompletedProcess, *words: str) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("ssw: ") and done.stderr.strip().count("\n") == 0, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


def unprivileged() -> tuple[str, ...]:
    """A prefix that takes root's power to write anywhere away (a user namespace), or ()."""
    if os.geteuid() != 0:
        return ()
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "--user", "true"]).returncode != 0:
        pytest.skip("root, and no user namespace to drop its power to write anywhere")
    return (unshare, "--user")


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("not a folder\n")
    return path


def test_probe_out_a_file_is_one_line(tmp_path: Path, a_file: Path):
    done = ssw("probe", "llamacpp", "m", "--out", a_file, cwd=tmp_path)
    assert_one_line(done, f"--out {a_file} is a file, not a folder")


def test_bench_run_out_a_file_is_one_line(tmp_path: Path, a_file: Path):
    suite = REPO / "bench" / "suites" / "general"
    done = ssw("bench", "run", "--suite", suite, "--contestant", "null", "--out", a_file, cwd=REPO)
    assert_one_line(done, f"--out {a_file} is a file, not a folder")
    assert a_file.read_text() == "not a folder\n"


@pytest.mark.parametrize("inside", ["", "he"])
def test_bench_import_out_a_file_is_one_line(tmp_path: Path, a_file: Path, inside: str):
    from tests.bench.test_humaneval import write_data

    data = write_data(tmp_path / "HumanEval.jsonl.gz")
    out = a_file / inside if inside else a_file
    done = ssw("bench", "import", "humaneval", "--data", data, "--out", out, cwd=tmp_path)
    words = f"--out {out} is a file" if not inside else f"--out {out}: {a_file} is a file"
    assert_one_line(done, words, "not a folder")
    assert a_file.read_text() == "not a folder\n"


def test_bench_import_into_a_read_only_folder_is_one_line(tmp_path: Path):
    from tests.bench.test_humaneval import write_data

    data = write_data(tmp_path / "HumanEval.jsonl.gz")
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    out = folder / "he"
    try:
        done = ssw(
            "bench", "import", "humaneval", "--data", data, "--out", out,
            cwd=tmp_path, prefix=unprivileged(),
        )  # fmt: skip
    finally:
        folder.chmod(0o755)
    assert_one_line(done, f"--out {out}: cannot write in {folder}: Permission denied")
    assert list(folder.iterdir()) == []


def test_site_build_out_a_file_is_one_line(tmp_path: Path, a_file: Path):
    done = ssw("site", "build", RUNS, "--out", a_file, cwd=tmp_path)
    assert_one_line(done, f"--out {a_file} is a file, not a folder")


@pytest.mark.parametrize("inside", ["", "site"])
def test_site_build_into_a_read_only_folder_is_one_line(tmp_path: Path, inside: str):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    out = folder / inside if inside else folder
    try:
        done = ssw("site", "build", RUNS, "--out", out, cwd=tmp_path, prefix=unprivileged())
    finally:
        folder.chmod(0o755)
    assert_one_line(done, f"--out {out}: cannot write in {folder}: Permission denied")
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize(
    ("content", "words"),
    [(BINARY, "is binary (a NUL byte at offset 7)"), (NOT_UTF8, "is not UTF-8 text (byte 0xe9")],
    ids=["binary", "not-utf8"],
)
@pytest.mark.parametrize("command", [("prove",), ("claims", "register", "C-001")])
def test_a_claims_file_that_is_not_text_is_one_line(
    tmp_path: Path, content: bytes, words: str, command: tuple[str, ...]
):
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims" / "claims.yaml").write_bytes(content)
    done = ssw(*command, cwd=tmp_path)
    assert_one_line(done, "claims/claims.yaml: (file):", words)
    assert sorted(p.name for p in (tmp_path / "claims").iterdir()) == ["claims.yaml"]


# --- Ctrl-C during a command: its output reader ---


def test_ctrl_c_during_a_command_ends_its_output_reader_quietly(tmp_path: Path, monkeypatch):
    """A process that left the command's group keeps the pipe; Ctrl-C ends the call: the reader
    must not read a descriptor the interrupted caller closed (EBADF in a thread traceback)."""
    mark, stop = tmp_path / "started", tmp_path / "stop"
    outlives = f"setsid sh -c 'while [ ! -e {stop} ]; do sleep 0.01; done; echo last' &"
    command = f"{outlives} touch {mark}; exec sleep 600"
    failures: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", failures.append)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    main = threading.main_thread().ident
    assert main is not None

    def ctrl_c() -> None:
        wait_for(mark.exists, "the command starting", 30)
        signal.pthread_kill(main, signal.SIGINT)

    before = set(threading.enumerate())
    threading.Thread(target=ctrl_c, daemon=True).start()
    try:
        run_in_group(
            ["sh", "-c", command],
            cwd=tmp_path,
            env=dict(os.environ),
            timeout_s=120,
            output_cap=4096,
        )
    except KeyboardInterrupt:
        pass  # as the run tool's caller does: the call's frame, and its pipe, are let go
    else:
        raise AssertionError("the command was not interrupted")
    finally:
        signal.signal(signal.SIGINT, previous)
    gc.collect()
    stop.mkdir()  # a folder, not a file: no descriptor that could take the closed one's number
    for thread in set(threading.enumerate()) - before:
        # Ctrl-C can land while Thread.start() waits for the new thread to run (a loaded machine):
        # the thread is then listed but not yet started, and join() would refuse it.
        assert thread._started.wait(timeout=30), thread
        thread.join(timeout=30)
        assert not thread.is_alive(), thread
    assert [f"{f.exc_type.__name__}: {f.exc_value}" for f in failures] == []


def test_a_bench_asked_for_more_runs_per_task_than_it_plans_is_refused_at_once(tmp_path: Path):
    suite = REPO / "bench" / "suites" / "general"
    huge = "99999999999999999999"
    done = ssw(
        "bench",
        "run",
        "--suite",
        suite,
        "--contestant",
        "null",
        "--runs-per-task",
        huge,
        "--out",
        tmp_path / "b",
        cwd=REPO,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, done.stderr
    assert "--runs-per-task" in done.stderr and "1000" in done.stderr
    assert not (tmp_path / "b").exists()
