"""hide_keys: after it, no process (ssw itself included) shows a key in /proc/<pid>/environ."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stepswitch.util.keys import MARKER, hide_keys, looks_secret

CANARIES = {
    "OPENAI_API_KEY": "canary-provider-7f3a",  # a provider key the CLI names
    "ACME_SERVICE": "canary-named-9b2c",  # not secret-looking: only its name being passed hides it
    "DATABASE_URL": "postgres://app:canary-db-4d1e@db.invalid/app",
    "GITHUB_PAT": "canary-pat-2a8f",
}

# Reads its parent's initial environment the way any same-user process could.
_READ_PARENT = (
    "import os;print(open(f'/proc/{os.getppid()}/environ','rb').read().decode('utf-8','replace'))"
)

SCRIPT = f"""
import json, os, subprocess, sys
print("started", flush=True)
from stepswitch.util.keys import hide_keys
keys = hide_keys({{"OPENAI_API_KEY", "ACME_SERVICE"}})
child = subprocess.run([sys.executable, "-c", {_READ_PARENT!r}], capture_output=True, text=True)
print(json.dumps({{
    "keys": keys,
    "parent_environ_seen_by_child": child.stdout,
    "own_environ": open("/proc/self/environ", "rb").read().decode("utf-8", "replace"),
    "os_environ": dict(os.environ),
    "argv": sys.argv[1:],
    "cwd": os.getcwd(),
}}))
"""


def _run(tmp_path: Path, extra_env: dict[str, str]) -> tuple[list[str], dict[str, object]]:
    script = tmp_path / "ssw_like.py"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not looks_secret(k, v)} | extra_env
    env.pop(MARKER, None)
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [sys.executable, str(script), "an arg", "--flag"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = done.stdout.splitlines()
    return lines[:-1], json.loads(lines[-1])


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
def test_keys_leave_the_initial_environment_and_stay_in_memory(tmp_path: Path) -> None:
    before, report = _run(tmp_path, CANARIES)
    assert before == ["started", "started"]  # exactly one re-exec, no loop
    assert report["keys"] == CANARIES
    for seen in ("parent_environ_seen_by_child", "own_environ"):
        text = str(report[seen])
        assert "PATH=" in text  # the probe really read an environment
        for value in CANARIES.values():
            assert value not in text
    os_environ = report["os_environ"]
    assert isinstance(os_environ, dict)
    assert not set(CANARIES) & set(os_environ)
    assert MARKER not in os_environ
    assert report["argv"] == ["an arg", "--flag"]
    assert report["cwd"] == str((tmp_path / "work").resolve())


def test_without_secrets_it_does_not_reexec(tmp_path: Path) -> None:
    before, report = _run(tmp_path, {})
    assert before == ["started"]
    assert report["keys"] == {}


def test_a_forged_marker_never_reexecs_and_still_takes_the_keys_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(MARKER, "not-a-descriptor")
    monkeypatch.setenv("SOME_API_KEY", "canary-forged")
    assert hide_keys() == {"SOME_API_KEY": "canary-forged"}
    assert MARKER not in os.environ
    assert "SOME_API_KEY" not in os.environ


@pytest.mark.parametrize(
    ("name", "value", "secret"),
    [
        ("DATABASE_URL", "postgres://app:hunter2@db/app", True),
        ("REDIS_URL", "redis://localhost:6379/0", False),
        ("GITHUB_PAT", "x", True),
        ("SENTRY_DSN", "x", True),
        ("OPENAI_API_KEY", "x", True),
        ("PATH", "/usr/bin", False),
        ("LANG", "C.UTF-8", False),
    ],
)
def test_looks_secret_by_name_or_by_a_password_in_a_url(
    name: str, value: str, secret: bool
) -> None:
    assert looks_secret(name, value) is secret
