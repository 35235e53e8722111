"""hide_keys: after it, no process (ssw itself included) shows a key in /proc/<pid>/environ;
and the one definition of a secret variable it, clean_env and child_env share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stepswitch.util import keys
from stepswitch.util.env import clean_env
from stepswitch.util.keys import MARKER, hide_keys
from stepswitch.util.sandbox import child_env
from stepswitch.util.secrets import looks_secret
from tests.harness.cli import run_process

CANARIES = {
    "OPENAI_API_KEY": "canary-provider-7f3a",  # a provider key the CLI names
    "ACME_SERVICE": "canary-named-9b2c",  # not secret-looking: only its name being passed hides it
    "DATABASE_URL": "postgres://app:canary-db-4d1e@db.invalid/app",
    "GITHUB_PAT": "canary-pat-2a8f",
    "MY_SERVICE_CREDENTIAL": "canary-credential-61d0",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T0/B0/canary-webhook-8e4a",
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
    done = run_process([sys.executable, str(script), "an arg", "--flag"], work, env, check=True)
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


SECRETS = [
    ("DATABASE_URL", "postgres://app:hunter2@db/app"),
    ("DATABASE_URL", "postgres://app:pa/ss@db/app"),  # a "/" its writer did not encode
    ("REDIS_URL", "redis://:hunter2@cache:6379/0"),
    ("REPORTS_URL", "postgresql://db/reports?user=app&password=hunter2"),
    ("BLOB_URL", "https://acct.blob.core.windows.net/c?sv=2024&sig=abc123"),
    ("MY_SERVICE_CREDENTIAL", "x"),
    ("GOOGLE_APPLICATION_CREDENTIALS", "/home/me/sa.json"),
    ("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T0/B0/x"),
    ("DISCORD_WEBHOOK", "https://discord.com/api/webhooks/1/x"),
    ("WEBHOOK_URL", "https://example.com/hook/x"),
    ("GITHUB_PAT", "x"),
    ("SENTRY_DSN", "x"),
    ("SESSION_COOKIE", "x"),
    ("NPM_AUTH", "x"),
    ("SMTP_PASS", "x"),
    ("GPG_PASSPHRASE", "x"),
    ("DB_PASSWORD", "x"),
    ("OPENAI_API_KEY", "x"),
    ("AWS_SECRET_ACCESS_KEY", "x"),
    ("HF_TOKEN", "x"),
    ("token", "x"),
    ("OTEL_EXPORTER_OTLP_HEADERS", "x-honeycomb-team=x"),
    ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "authorization=Bearer x"),
]
NOT_SECRETS = [
    ("PATH", "/usr/bin:/bin"),
    ("PYTHONPATH", "src"),
    ("TOKENIZERS_PARALLELISM", "false"),
    ("REDIS_URL", "redis://localhost:6379/0"),
    ("PIP_INDEX_URL", "https://pypi.org/simple"),
    ("PROXY_URL", "http://proxy.internal:3128"),
    ("SEARCH_URL", "https://example.com/?q=password"),
    ("HOME", "/home/me"),
    ("LANG", "C.UTF-8"),
    ("SSH_AUTH_SOCK", "/tmp/agent.sock"),
    ("KEYBOARD_LAYOUT", "us"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318"),
]


@pytest.mark.parametrize(("name", "value"), SECRETS)
def test_a_variable_is_secret_by_its_name_or_by_a_credential_in_its_url(name: str, value: str):
    assert looks_secret(name, value)


@pytest.mark.parametrize(("name", "value"), NOT_SECRETS)
def test_paths_settings_and_urls_without_a_credential_are_not_secret(name: str, value: str):
    assert not looks_secret(name, value)


def test_keys_looks_secret_is_the_one_definition_of_util_secrets():
    assert keys.looks_secret is looks_secret


def test_clean_env_and_child_env_take_out_exactly_the_variables_that_look_secret(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name, value in [*SECRETS, *NOT_SECRETS]:
        monkeypatch.setenv(name, value)
    secret = {name for name, _ in SECRETS} - {name for name, _ in NOT_SECRETS}
    kept = clean_env()
    assert not secret & set(kept)
    assert {"PATH", "PYTHONPATH", "TOKENIZERS_PARALLELISM", "HOME", "KEYBOARD_LAYOUT"} <= set(kept)
    # child_env lets only a few names through at all; by prefix, secret-looking ones stay out.
    allowed_by_prefix = {
        "PYTHONPATH": "src",
        "PYTHON_KEYRING_CREDENTIAL": "x",
        "PYTEST_WEBHOOK_URL": "https://hooks.example.com/x",
        "LC_DB": "postgres://u:pw@db/x",
    }
    assert set(child_env(allowed_by_prefix, tmp_path)) & set(allowed_by_prefix) == {"PYTHONPATH"}


_NOTICE = """
from stepswitch.util.keys import hide_keys, secrets_notice
hide_keys()
print(secrets_notice({"PATH": "/usr/bin"}))
print(secrets_notice({"PATH": "/usr/bin", "PYTHON_TOKEN": "allowed-through"}))
"""


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
def test_the_secrets_notice_names_what_the_commands_can_read_or_says_none_can() -> None:
    env = {k: v for k, v in os.environ.items() if not looks_secret(k, v)}
    env.pop(MARKER, None)
    env |= {"MY_SERVICE_CREDENTIAL": "x", "SLACK_WEBHOOK_URL": "https://hooks.example.com/x"}
    done = subprocess.run(
        [sys.executable, "-c", _NOTICE], env=env, capture_output=True, text=True, check=True
    )
    hidden, allowed = done.stdout.splitlines()
    assert hidden == (
        "secrets: none can be read by the commands "
        "(MY_SERVICE_CREDENTIAL, SLACK_WEBHOOK_URL taken out of every environment)"
    )
    assert allowed == "secrets: the commands can read PYTHON_TOKEN (not taken out of their way)"


_NOTICE_WITHOUT_HIDING = """
from stepswitch.util.keys import secrets_notice
print(secrets_notice({"PATH": "/usr/bin"}))
"""


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
def test_a_secret_left_in_ssws_own_environment_is_named_as_readable() -> None:
    # Without hide_keys the variable stays in /proc/<pid>/environ, which an unconfined command
    # of the same user reads, whatever the command's own environment holds.
    env = {k: v for k, v in os.environ.items() if not looks_secret(k, v)}
    env |= {"MY_SERVICE_CREDENTIAL": "x"}
    done = subprocess.run(
        [sys.executable, "-c", _NOTICE_WITHOUT_HIDING],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == (
        "secrets: the commands can read MY_SERVICE_CREDENTIAL (not taken out of their way)"
    )
