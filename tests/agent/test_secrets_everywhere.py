"""Where a sandbox does not save us (`--sandbox none`, `ssw gates`): a real `ssw` process on a
pseudo-terminal, with canary values in secret-looking variables, whose gate and `run` commands
dump every environment they can read (their own and /proc/<pid>/environ up the parent chain)
and look for a terminal. No canary may appear, no command may have a terminal, and the
terminal shows the model's and the commands' control characters escaped."""

from __future__ import annotations

import contextlib
import os
import re
import select
import subprocess
import sys
import threading
import time
import tty
from dataclasses import dataclass
from pathlib import Path

import pytest

from stepswitch.cli.live import CLEAR
from stepswitch.records.folder import load_run
from tests.agent.conftest import NEEDS_A_SANDBOX
from tests.bench import write_task
from tests.harness.repo import git, sample_repo
from tests.harness.task import (
    approve_and_summarize,
    done,
    fix_the_bug,
    make_policy,
    prose,
    tool,
    write_policy,
    write_script,
)

CANARIES = {
    "DATABASE_URL": "postgres://app:canary-db-7e1d@db.internal/app",
    "MY_SERVICE_CREDENTIAL": "canary-credential-52af",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T0/B0/canary-webhook-c3d9",
    "REPORTS_URL": "postgresql://db.internal/reports?user=app&password=canary-query-0b7e",
}
# What a hostile model or command writes to take the terminal over: retitle it, clear it,
# overwrite the line, a C1 CSI, and a bidi override that reverses what follows.
HOSTILE = "\x1b]0;owned\x07 \x1b[2J \rback\x08 \x9b31m \u202egnirts"
FORGED = "\nchange: branch main at 0badc0ffee00\n"  # a line like ssw's own, forged
HOSTILE_PRINTF = r"printf '\033]0;owned\007 \033[2J \rback\010 \302\233 \342\200\256x\n'"
# Raw, none of these may reach the terminal; newline and tab may.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

PROBE = '''\
"""Appends every environment it can read to argv[1]; prints whether it has a terminal."""
import os, sys


def stat(pid):  # state, ppid, pgrp, session, tty_nr, ...
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rpartition(")")[2].split()


def read(path, sep=b"\\n"):
    try:
        with open(path, "rb") as f:
            return f.read().replace(b"\\0", sep).decode("utf-8", "replace")
    except OSError as exc:
        return f"unreadable: {exc.strerror}"


chain, pid = [], os.getpid()
while pid > 0:
    try:
        fields = stat(pid)
    except OSError:
        break
    chain.append((pid, fields[4], read(f"/proc/{pid}/cmdline", b" ")))
    pid = int(fields[1])


def terminal(fd):
    return os.ttyname(fd) if os.isatty(fd) else "none"


try:
    os.close(os.open("/dev/tty", os.O_RDWR))
    dev_tty = "opened"
except OSError:
    dev_tty = "none"
ssw_tty = next((t for p, t, cmd in chain[1:] if "stepswitch" in cmd), "unseen")
line = (
    f"terminal of the {sys.argv[2]}: stdin {terminal(0)}, stdout {terminal(1)}, "
    f"stderr {terminal(2)}, /dev/tty {dev_tty}, controlling {chain[0][1]}; "
    f"ssw's controlling {ssw_tty}"
)
dump = [line, f"own environment: {dict(os.environ)!r}"]
dump += [f"pid {p} tty {t} {cmd}\\n{read(f'/proc/{p}/environ')}" for p, t, cmd in chain]
try:
    with open(sys.argv[1], "a", encoding="utf-8") as out:
        out.write("\\n".join(dump) + "\\n")
except OSError:
    pass  # inside a sandbox the dump's folder is hidden: the line below still tells
print(line)
'''
NO_TERMINAL = "stdin none, stdout none, stderr none, /dev/tty none, controlling 0;"


def on_a_terminal(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """`python args...` as a user starts it from a terminal: a pseudo-terminal (raw, so the
    bytes are the program's own) as its stdin, stdout, stderr and controlling terminal. Its exit
    code and everything it and its children wrote on the terminal."""
    master, slave = os.openpty()
    tty.setraw(slave)
    # A session leader that opens a terminal makes it its controlling one; then exec.
    attach = (
        "import os, sys; fd = os.open(sys.argv[1], os.O_RDWR); "
        "[os.dup2(fd, n) for n in (0, 1, 2)]; os.close(fd); "
        "os.execv(sys.executable, [sys.executable, *sys.argv[2:]])"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", attach, os.ttyname(slave), *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    # Our end of the terminal stays open: once every writer is gone, some kernels drop what
    # the master has not read yet. The process's exit is told through a pipe select can watch.
    exited, tell = os.pipe()
    threading.Thread(target=lambda: (proc.wait(), os.write(tell, b"x")), daemon=True).start()
    shown = bytearray()
    deadline = time.monotonic() + 300
    try:
        while True:
            left = deadline - time.monotonic()
            ready = select.select([master, exited], [], [], max(0.0, left))[0] if left > 0 else []
            if not ready:
                proc.kill()
                raise AssertionError(f"still running after 300 s: {bytes(shown[-2000:])!r}")
            if master in ready:
                shown += os.read(master, 65536)
            elif exited in ready:
                break
        os.set_blocking(master, False)
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(master, 65536):
                shown += chunk
    finally:
        for fd in (master, slave, exited, tell):
            os.close(fd)
    return proc.wait(), shown.decode("utf-8", "replace")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return {**env, **CANARIES, "PYTHONDONTWRITEBYTECODE": "1"}


def _probed_repo(target: Path, gates: str) -> Path:
    repo = sample_repo(target, "mean_bug")
    (repo / "probe.py").write_text(PROBE, encoding="utf-8")
    (repo / ".stepswitch.toml").write_text(gates, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a probe gate")
    return repo


def _probe(dump: Path, who: str) -> str:
    return f"{sys.executable} probe.py {dump} {who}"


@dataclass(frozen=True)
class Probed:
    code: int
    terminal: str  # everything ssw wrote on its terminal
    dump: str  # what the probes could read ("" inside a sandbox: its folder is hidden)
    reports: list[str]  # the probes' "terminal of the ..." lines, from the records and logs
    left: str  # everything the run left: records, logs, the branch's commits, the ledger


def _ssw_run(work: Path, sandbox: str) -> Probed:
    dump = work / "dump.txt"
    gates = f'[gates.probe]\ncommand = "{_probe(dump, "gate")}"\n\n[gates.tests]\nkind = "tests"\n'
    repo = _probed_repo(work / "repo", gates)
    replies = [
        done("plan " + HOSTILE),
        prose("prose " + HOSTILE),
        done("calc/ops.py " + HOSTILE),
        tool("look" + FORGED + HOSTILE, path="calc/ops.py"),  # no such tool: its name is shown
        done("notes"),
        tool("run", command=f"{_probe(dump, 'run-tool')}; {HOSTILE_PRINTF}"),
        done("ran " + HOSTILE),
        *fix_the_bug(),
        *approve_and_summarize("Fix mean " + HOSTILE + "\n\nbody " + HOSTILE),
    ]
    policy = write_policy(work, make_policy())
    script = write_script(work, replies)
    args = ["-m", "stepswitch", "run", str(repo), "--policy", str(policy), "--script"]
    args += [str(script), "--task", "fix mean " + HOSTILE, "--sandbox", sandbox]
    code, shown = on_a_terminal(args, work, _env())
    [folder] = list((repo / ".ssw" / "runs").iterdir())
    run = load_run(folder)
    outputs = [c.output for s in run.model_steps for c in s.tool_calls if c.name == "run"]
    logs = [p.read_text(errors="replace") for p in (folder / "logs").glob("*probe*")]
    found = "\n".join([*outputs, *logs])
    reports = re.findall(r"terminal of the [^\n]*", found)
    left = [p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file()]
    left.append(git(repo, "log", "-p", "--all"))
    left.append((repo / ".ssw" / "ledger.sqlite").read_bytes().decode(errors="replace"))
    text = dump.read_text(encoding="utf-8") if dump.exists() else ""
    return Probed(code, shown, text, reports, "\n".join(left))


def _leaks(*texts: str) -> list[str]:
    return [name for name, value in CANARIES.items() if any(value in t for t in texts)]


@pytest.fixture(scope="module")
def unconfined(tmp_path_factory: pytest.TempPathFactory) -> Probed:
    return _ssw_run(tmp_path_factory.mktemp("unconfined"), "none")


@pytest.fixture(scope="module")
def gates_run(tmp_path_factory: pytest.TempPathFactory) -> Probed:
    work = tmp_path_factory.mktemp("gates")
    dump = work / "dump.txt"
    gates = (
        f'[gates.probe]\ncommand = "{_probe(dump, "gate")}"\n\n'
        f"[gates.noise]\ncommand = '''{HOSTILE_PRINTF}; exit 1'''\n"
    )
    repo = _probed_repo(work / "repo", gates)
    # Unconfined, as the run above: its probe reads ssw's own process and writes outside the repo.
    args = ["-m", "stepswitch", "gates", str(repo), "--sandbox", "none"]
    code, shown = on_a_terminal(args, work, _env())
    text = dump.read_text(encoding="utf-8")
    return Probed(code, shown, text, re.findall(r"terminal of the [^\n]*", text), "")


# --- the test's terminal is real ---


def test_a_process_started_on_the_test_terminal_has_it_as_its_controlling_terminal(
    tmp_path: Path,
):
    # The control for the tests below: what they see missing, this harness does give.
    (tmp_path / "probe.py").write_text(PROBE, encoding="utf-8")
    code, shown = on_a_terminal(["probe.py", str(tmp_path / "dump"), "control"], tmp_path, {})

    assert code == 0, shown
    assert "stdin /dev/pts/" in shown and "/dev/tty opened" in shown
    assert "controlling 0;" not in shown


# --- secrets ---


@pytest.mark.slow
def test_without_a_sandbox_no_command_reads_a_canary_in_any_environment(unconfined: Probed):
    assert unconfined.code == 0, unconfined.terminal[-3000:]
    dump = unconfined.dump
    assert "terminal of the gate" in dump and "terminal of the run-tool" in dump  # both probed
    assert re.search(r"pid \d+ tty \d+ \S*python\S* -m stepswitch run ", dump)  # ssw's own read
    assert "PATH=" in dump
    assert _leaks(dump, unconfined.terminal, unconfined.left) == []


@pytest.mark.slow
def test_an_unconfined_run_says_at_its_start_that_no_secret_can_be_read(unconfined: Probed):
    lines = unconfined.terminal.splitlines()
    at = lines.index(next(line for line in lines if line.startswith("sandbox: none.")))
    notice = lines[at + 1]
    assert notice.startswith("secrets: none can be read by the commands (")
    assert all(name in notice for name in CANARIES)  # named, never shown
    assert notice.endswith("taken out of every environment)")


@pytest.mark.slow
def test_ssw_gates_gives_its_gates_no_canary_and_keeps_none_in_its_own_environment(
    gates_run: Probed,
):
    dump = gates_run.dump
    assert re.search(r"pid \d+ tty \d+ \S*python\S* -m stepswitch gates ", dump)
    assert "PATH=" in dump
    assert _leaks(dump, gates_run.terminal) == []


@pytest.mark.slow
def test_a_bench_without_a_sandbox_says_at_its_start_that_no_secret_can_be_read(
    tmp_path: Path,
):
    write_task(tmp_path, "t1")
    args = ["bench", "run", "--suite", "suite", "--contestant", "null", "--sandbox", "none"]
    done_bench = subprocess.run(
        [sys.executable, "-m", "stepswitch", *args, "--out", "runs/b1", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env=_env(),
    )

    assert done_bench.returncode == 0, done_bench.stderr
    lines = done_bench.stderr.splitlines()
    at = lines.index(next(line for line in lines if line.startswith("sandbox: none.")))
    assert lines[at + 1].startswith("secrets: none can be read by the commands (")
    assert all(name in lines[at + 1] for name in CANARIES)
    assert _leaks(done_bench.stdout, done_bench.stderr) == []


# --- the terminal ---


@pytest.mark.slow
def test_without_a_sandbox_no_gate_or_run_command_has_ssws_terminal(unconfined: Probed):
    assert len(unconfined.reports) >= 2, unconfined.reports  # the run tool and the gate
    for report in unconfined.reports:
        assert NO_TERMINAL in report
        assert "ssw's controlling 0" not in report and "unseen" not in report  # ssw had one


@pytest.mark.slow
@NEEDS_A_SANDBOX
def test_in_the_sandbox_no_gate_or_run_command_has_ssws_terminal(tmp_path: Path):
    confined = _ssw_run(tmp_path, "auto")

    assert confined.code == 0, confined.terminal[-3000:]
    assert {r.split(":")[0] for r in confined.reports} == {
        "terminal of the gate",
        "terminal of the run-tool",
    }
    assert all(NO_TERMINAL in report for report in confined.reports)


@pytest.mark.slow
def test_no_gate_ssw_gates_runs_has_its_terminal(gates_run: Probed):
    [report] = gates_run.reports
    assert NO_TERMINAL in report
    assert "ssw's controlling 0" not in report and "unseen" not in report


# --- control characters ---


@pytest.mark.slow
def test_the_models_control_characters_reach_the_terminal_escaped(unconfined: Probed):
    # ssw's own codes aside (its live status line is redrawn with CLEAR), every control
    # character that reaches the terminal is escaped, the status line's included.
    assert CLEAR in unconfined.terminal
    shown = unconfined.terminal.replace(CLEAR, "\n")
    assert RAW_CONTROL.findall(shown) == []
    # The refused tool's name is the model's text on the step's line, and stays on it.
    name = (
        r"look\nchange: branch main at 0badc0ffee00\n"
        r"\x1b]0;owned\x07 \x1b[2J \rback\x08 \x9b31m \u202egnirts"
    )
    assert f"{name} refused" in shown
    assert "change: branch main at 0badc0ffee00" not in shown.splitlines()


@pytest.mark.slow
def test_ssw_gates_shows_a_commands_control_characters_escaped(gates_run: Probed):
    shown = gates_run.terminal
    assert gates_run.code == 1 and "FAILED at noise" in shown
    assert RAW_CONTROL.findall(shown) == []
    # (The report splits the output into lines, and a CR ends one.)
    assert r"\x1b]0;owned\x07 \x1b[2J" in shown and r"back\x08 \x9b \u202ex" in shown
