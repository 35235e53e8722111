"""Every file the user names, malformed in every way we know, as `ssw` meets it in a real process:
one line `ssw: <path>: ... (fix: ...)`, exit 2, and nothing made: no .ssw/, no branch, no worktree,
the checkout untouched."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import tomli_w

from stepswitch.registry.presets import registry_dir
from stepswitch.util.inputs import MAX_INPUT_BYTES
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import git, sample_repo
from tests.harness.task import DEFAULT_POLICY, done, explore, write_policy, write_script

REPO_ROOT = Path(__file__).resolve().parents[1]

# What each kind of bad file holds, and the words the error must have for it.
KINDS = {
    "missing": (None, "no such"),
    "folder": ("folder", "is a folder, not a"),
    "binary": (b"\x7fELF\x02\x01\x01\x00\x00\x00garbage", "is binary (a NUL byte at offset 7)"),
    "not UTF-8": (b'task = "caf\xe9"\n', "is not UTF-8 text (byte 0xe9 at offset 11)"),
    # Issue 45: these never returned (a FIFO waits for a writer, /dev/zero never ends).
    "FIFO": ("fifo", "is a FIFO (named pipe), not a"),
    "device": ("device", "is a character device, not a"),
    "too large": ("large", " may be ("),
}


def make_bad(path: Path, kind: str) -> Path:
    content, _ = KINDS[kind]
    if content == "fifo":
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
    elif content == "device":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to("/dev/zero")
    elif content == "large":  # past every bound: a task file's 1 MiB and a config file's 8 MiB
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"# padding\n" * ((MAX_INPUT_BYTES // 10) + 1))
    elif content == "folder":
        path.mkdir(parents=True)
        (path / "inside.txt").write_text("a file in the folder\n")
    elif isinstance(content, bytes):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return path


def ssw(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and k not in ("SSW_LEDGER", "SSW_REGISTRY")
    }
    return run_ssw_cli(args, env={**base, **(env or {})}, timeout=60)


@dataclass
class Setup:
    repo: Path
    policy: Path
    script: Path
    work: Path
    env: dict[str, str] = field(default_factory=dict)

    def run_args(self, **replace: str | Path) -> list[str | Path]:
        given = {"--policy": self.policy, "--script": self.script, "--task": "fix mean", **replace}
        if "--task-file" in given:
            del given["--task"]
        return ["run", self.repo, *(x for pair in given.items() for x in pair)]


def make_setup(tmp_path: Path) -> Setup:
    """The user's repository, a policy and a script, each valid: a test spoils one of them."""
    work = tmp_path / "inputs"
    work.mkdir()
    return Setup(
        repo=sample_repo(tmp_path / "repo", "mean_bug"),
        policy=write_policy(work, DEFAULT_POLICY),
        script=write_script(work, explore()),
        work=work,
    )


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return make_setup(tmp_path)


def assert_refused_leaving_nothing(result: subprocess.CompletedProcess[str], s: Setup) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("ssw: ") and result.stderr.count("\n") == 1, result.stderr
    assert "(fix: " in result.stderr
    assert not (s.repo / ".ssw").exists()
    assert git(s.repo, "branch", "--format=%(refname:short)").split() == ["main"]
    assert git(s.repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert git(s.repo, "status", "--porcelain", "--untracked-files=all") == ""


def _registry_with(s: Setup, kind: str) -> Path:
    """A copy of the registry with one bad preset beside the good ones (or no registry at all)."""
    root = s.work / "registry"
    if kind == "missing":
        return root  # SSW_REGISTRY names a folder that does not exist
    shutil.copytree(registry_dir() / "providers", root / "providers")
    make_bad(root / "providers" / "extra.toml", kind)
    return root


NAMED_FILES = ["--task-file", "--policy", "--script"]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("flag", NAMED_FILES)
def test_a_bad_file_named_on_the_command_line_is_one_line_exit_2_and_nothing_made(
    setup: Setup, flag: str, kind: str
):
    bad = make_bad(setup.work / "bad-input", kind)
    result = ssw(*setup.run_args(**{flag: bad}))

    assert_refused_leaving_nothing(result, setup)
    assert result.stderr.startswith(f"ssw: {bad}: (file): ")
    assert KINDS[kind][1] in result.stderr


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_bad_preset_in_the_registry_is_one_line_exit_2_and_nothing_made(setup: Setup, kind: str):
    root = _registry_with(setup, kind)
    result = ssw(*setup.run_args(), env={"SSW_REGISTRY": str(root)})

    assert_refused_leaving_nothing(result, setup)
    if kind == "missing":
        assert result.stderr.startswith(f"ssw: {root / 'providers'}: (folder): no provider presets")
        assert f"point SSW_REGISTRY (now '{root}') at a folder" in result.stderr
    else:
        assert result.stderr.startswith(f"ssw: {root / 'providers' / 'extra.toml'}: (file): ")
        assert KINDS[kind][1] in result.stderr


@pytest.mark.parametrize("kind", ["binary", "not UTF-8"])
def test_a_bad_preset_is_one_line_for_every_command_that_reads_the_registry(
    setup: Setup, kind: str
):
    root = _registry_with(setup, kind)
    for args in (["models"], ["policy", "check", setup.policy], ["probe", "llamacpp", "m"]):
        result = ssw(*args, env={"SSW_REGISTRY": str(root)})
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.count("\n") == 1 and "extra.toml" in result.stderr


@pytest.mark.parametrize("kind", ["binary", "not UTF-8"])
def test_a_bad_gate_config_is_one_line_exit_2_and_nothing_made(setup: Setup, kind: str):
    make_bad(setup.repo / ".stepswitch.toml", kind)
    git(setup.repo, "add", "-A")
    git(setup.repo, "commit", "-qm", "a gate config")
    result = ssw(*setup.run_args())

    assert_refused_leaving_nothing(result, setup)
    assert result.stderr.startswith("ssw: .stepswitch.toml: ")


@pytest.mark.parametrize("kind", ["folder", "binary"])
def test_a_bad_ledger_is_one_line_exit_2_and_nothing_made(setup: Setup, kind: str):
    bad = make_bad(setup.work / "ledger.sqlite", kind)
    result = ssw(*setup.run_args(**{"--ledger": bad}))

    assert_refused_leaving_nothing(result, setup)
    assert str(bad) in result.stderr


@pytest.mark.parametrize("kind", list(KINDS))
def test_policy_check_of_a_bad_file_is_one_line_exit_2(setup: Setup, kind: str):
    bad = make_bad(setup.work / "bad.toml", kind)
    result = ssw("policy", "check", bad)

    assert result.returncode == 2
    assert result.stderr.startswith(f"ssw: {bad}: (file): ")
    assert KINDS[kind][1] in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("true", "Input should be a valid number (fix: write a plain number, not true)"),
        ('"30"', 'Input should be a valid number (fix: write a plain number, not "30")'),
    ],
)
def test_a_timeout_that_is_not_a_number_is_refused(setup: Setup, value: str, problem: str):
    policy = setup.policy.read_text().replace("timeout = 30", f"timeout = {value}", 1)
    setup.policy.write_text(policy)
    result = ssw(*setup.run_args())

    assert_refused_leaving_nothing(result, setup)
    assert result.stderr == f"ssw: {setup.policy}: workers.small.timeout: {problem}\n"


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("not a url", "is not an http:// or https:// URL"),
        ("ftp://127.0.0.1/v1/", "is not an http:// or https:// URL"),
        ("http://[::1", "is not a URL (Invalid IPv6 URL)"),
        ("http://127.0.0.1:port/v1/", "is not a URL (Port could not be cast to integer value"),
        ("http:///v1/", "has no host"),
    ],
)
def test_a_bad_base_url_is_refused_naming_it_before_any_call(setup: Setup, url: str, problem: str):
    probe = ssw("probe", "llamacpp", "m", "--base-url", url, "--out", setup.work / "probes")
    assert probe.returncode == 2
    assert probe.stderr.startswith(f"ssw: --base-url {url!r} {problem}")
    assert "(fix: e.g. http://127.0.0.1:8080/v1/)" in probe.stderr
    assert not (setup.work / "probes").exists()

    workers = {**DEFAULT_POLICY["workers"]}
    workers["small"] = {**workers["small"], "base_url": url}
    setup.policy.write_text(tomli_w.dumps({**DEFAULT_POLICY, "workers": workers}))
    result = ssw(*setup.run_args())
    assert_refused_leaving_nothing(result, setup)
    assert f"workers.small.base_url: {url!r} {problem}" in result.stderr


def test_an_unknown_sandbox_is_refused(setup: Setup):
    result = ssw(*setup.run_args(), "--sandbox", "chroot")
    assert result.returncode == 2
    assert result.stderr == "ssw: unknown sandbox 'chroot': choose auto, bwrap, unshare, none\n"
    assert not (setup.repo / ".ssw").exists()


# --- the checkout itself ---


def test_a_checkout_with_uncommitted_changes_is_refused_and_nothing_made(setup: Setup):
    (setup.repo / "calc" / "ops.py").write_text("# an edit the run would not see\n")
    result = ssw(*setup.run_args())

    assert result.returncode == 2
    assert result.stderr == (
        f"ssw: {setup.repo} has uncommitted changes (1 file: calc/ops.py): they would be left out "
        "of the run (commit or stash them, or pass --allow-dirty)\n"
    )
    assert not (setup.repo / ".ssw").exists()
    assert git(setup.repo, "branch", "--format=%(refname:short)").split() == ["main"]


def test_a_repository_without_commits_is_refused_and_nothing_made(setup: Setup, tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    setup.repo = empty
    result = ssw(*setup.run_args())

    assert result.returncode == 2
    assert result.stderr == f"ssw: {empty} has no commits yet; commit something first\n"
    assert sorted(p.name for p in empty.iterdir()) == [".git"]
    assert git(empty, "status", "--porcelain", "--untracked-files=all") == ""


def test_demo_into_a_file_is_refused(tmp_path: Path):
    target = tmp_path / "a-file"
    target.write_text("not a folder\n")
    result = ssw("demo", "--dir", target)
    assert result.returncode == 2
    assert result.stderr == f"ssw: --dir {target} is a file (fix: pick a new folder for the demo)\n"


def test_demo_where_no_folder_can_be_made_is_one_line(tmp_path: Path):
    """Under a file (root can write into a read-only folder, never under a file): the OSError
    of making the folder, as a read-only or full disk gives, is one line, not a traceback."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    result = ssw("demo", "--dir", blocker / "sub")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith(f"ssw: cannot make the demo repository in {blocker / 'sub'}")
    assert len(result.stderr.splitlines()) == 1


def test_demo_with_an_unknown_sandbox_is_refused_before_it_makes_a_folder(tmp_path: Path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    result = ssw("demo", "--sandbox", "bogus", env={"TMPDIR": str(scratch)})
    assert result.returncode == 2
    assert result.stderr == "ssw: unknown sandbox 'bogus': choose auto, bwrap, unshare, none\n"
    assert list(scratch.iterdir()) == []


def test_max_steps_past_the_bound_is_refused_naming_it(setup: Setup):
    """Issue 22: a run's steps are bounded (MAX_STEPS), from the flag or the file."""
    result = ssw(*setup.run_args(**{"--max-steps": "99999999999999999999"}))
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        "ssw: --max-steps 99999999999999999999: Input should be less than or equal to 10000\n"
    )
    assert not (setup.repo / ".ssw").exists()

    policy = setup.policy.read_text().replace("max_steps = 40", "max_steps = 10001", 1)
    assert "max_steps = 10001" in policy
    setup.policy.write_text(policy)
    result = ssw(*setup.run_args())
    assert_refused_leaving_nothing(result, setup)
    assert "limits.max_steps: Input should be less than or equal to 10000" in result.stderr


def test_ssw_gates_on_a_checkout_whose_pyproject_is_a_fifo_is_one_line_not_a_hang(setup: Setup):
    """A repository's own config goes through the same reader: `ssw gates` once waited forever
    on a FIFO named pyproject.toml (issue 45)."""
    (setup.repo / "pyproject.toml").unlink(missing_ok=True)
    os.mkfifo(setup.repo / "pyproject.toml")
    result = ssw("gates", setup.repo)
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        "ssw: pyproject.toml: (file): is a FIFO (named pipe), not a TOML file "
        "(fix: check the file)\n"
    )


def test_a_repository_whose_path_holds_a_newline_runs_as_any_other(tmp_path: Path):
    # Issue 45: `ssw run` called it "not a folder" (git's answers were read a line each) while
    # `ssw gates` took it. Both take it now, and give the same verdict.
    s = make_setup(tmp_path)
    moved = tmp_path / "my\nrepo"
    s.repo.rename(moved)
    s.repo = moved
    script = write_script(s.work, [*explore(), done("nothing to change")])
    ran = ssw(*s.run_args(**{"--script": script, "--max-steps": "5"}))
    assert "not a folder" not in ran.stderr and "Traceback" not in ran.stderr, ran.stderr
    assert "ssw run " in ran.stdout, ran.stdout + ran.stderr  # it started: header, then steps
    gates = ssw("gates", moved)
    assert "Traceback" not in gates.stderr and "not a folder" not in gates.stderr, gates.stderr
    # The same verdict: the base commit's tests fail (the repository's bug) in both.
    assert gates.returncode == 1, gates.stdout + gates.stderr
    assert "tests:call-map: failed" in ran.stdout or "fails before any edit" in ran.stdout


def _read_only(repo: Path, *ssw_args: str | Path) -> subprocess.CompletedProcess[str]:
    """`ssw ARGS` where `repo` is a read-only mount (a mount namespace of its own)."""
    command = [sys.executable, "-m", "stepswitch", *map(str, ssw_args)]
    inner = f"mount --bind -o ro {shlex.quote(str(repo))} {shlex.quote(str(repo))} && exec "
    inner += " ".join(shlex.quote(c) for c in command)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", inner], capture_output=True, text=True, env=env, timeout=120
    )


def test_a_read_only_repository_is_refused_in_one_line_and_nothing_is_written(setup: Setup):
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"mount --bind -o ro {shlex.quote(str(setup.repo))} /mnt"],
        capture_output=True,
    )
    if probe.returncode != 0:
        pytest.skip("no mount namespace here (unshare -rm)")
    # Control: the mount really is read-only inside.
    touched = subprocess.run(
        ["unshare", "-rm", "sh", "-c",
         f"mount --bind -o ro {shlex.quote(str(setup.repo))} {shlex.quote(str(setup.repo))} && "
         f"touch {shlex.quote(str(setup.repo / 'x'))}"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert touched.returncode != 0 and "Read-only file system" in touched.stderr

    result = _read_only(setup.repo, *setup.run_args())
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr == (
        f"ssw: {setup.repo} cannot be written (a read-only file system, or no permission): ssw "
        "keeps .ssw/ there (fix: run it on a writable clone of the repository)\n"
    )
    assert_refused_leaving_nothing(result, setup)


@pytest.mark.parametrize("kind", ["FIFO", "device", "too large", "binary", "not UTF-8"])
def test_a_bad_task_toml_in_a_suite_is_one_line_exit_2_not_a_hang(tmp_path: Path, kind: str):
    # Issue 45: a FIFO or /dev/zero as a task's task.toml hung `ssw bench validate` and `run`.
    suite = tmp_path / "suite"
    shutil.copytree(REPO_ROOT / "bench" / "suites" / "general" / "bulk-discount",
                    suite / "bulk-discount")  # fmt: skip
    task_toml = suite / "bulk-discount" / "task.toml"
    task_toml.unlink()
    make_bad(task_toml, kind)
    for command in (["bench", "validate", suite], ["bench", "run", "--suite", suite,
                    "--contestant", "null", "--out", tmp_path / "out"]):  # fmt: skip
        result = ssw(*command)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "Traceback" not in result.stderr
        assert result.stderr.startswith(f"ssw: {task_toml}: ") and result.stderr.count("\n") == 1
        assert KINDS[kind][1] in result.stderr
