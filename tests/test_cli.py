"""The `ssw` command as a user runs it: a process of its own (forked by tests/ssw_cli.py), exit
codes and one-line errors."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import tomli_w

from tests.harness.cli import run_ssw_cli

REPO = Path(__file__).resolve().parents[1]


def ssw(*args: str, registry: Path | None = None, env_extra: dict | None = None):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    if registry is not None:
        env["SSW_REGISTRY"] = str(registry)
    env.update(env_extra or {})
    return run_ssw_cli(args, env=env, timeout=60)


def copy_registry(tmp_path: Path) -> Path:
    root = tmp_path / "registry"
    shutil.copytree(REPO / "registry" / "providers", root / "providers")
    return root


def test_models_json_lists_the_token_factory_ladder_with_prices_or_unknown():
    result = ssw("models", "--provider", "tokenfactory", "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert {r["model"] for r in rows} == {
        "nvidia/Nemotron-3_5-Lightning",
        "nvidia/nemotron-3-super-120b-a12b",
        "nvidia/Nemotron-3-Ultra-550b-a55b",
        "openai/gpt-oss-120b",
    }
    for row in rows:
        assert row["price"] == "unknown" or row["price"]["source"]


def test_models_table_shows_every_provider():
    result = ssw("models")
    assert result.returncode == 0, result.stderr
    for name in (
        "tokenfactory",
        "openai",
        "anthropic",
        "gemini",
        "openrouter",
        "vllm",
        "llamacpp",
        "ollama",
    ):
        assert name in result.stdout


def test_unknown_provider_is_one_line_and_exit_2():
    result = ssw("models", "--provider", "nope")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "unknown provider 'nope'" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_malformed_preset_names_file_and_key_with_exit_2(tmp_path):
    root = copy_registry(tmp_path)
    preset = root / "providers" / "vllm.toml"
    preset.write_text(preset.read_text().replace("base_url", "base_urll", 1))
    result = ssw("models", registry=root)
    assert result.returncode == 2
    assert "vllm.toml" in result.stderr and "base_url" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0


def test_a_preset_without_a_price_is_refused_rather_than_read_as_free(tmp_path):
    root = copy_registry(tmp_path)
    preset = root / "providers" / "tokenfactory.toml"
    data = tomllib.loads(preset.read_text())
    del data["models"]["openai/gpt-oss-120b"]["price"]
    preset.write_text(tomli_w.dumps(data))
    result = ssw("models", registry=root)
    assert result.returncode == 2
    assert "tokenfactory.toml" in result.stderr and "price" in result.stderr


def test_prices_refresh_without_the_key_says_which_variable_to_set():
    result = ssw("prices", "refresh", "tokenfactory")
    assert result.returncode == 2
    assert "NEBIUS_API_KEY" in result.stderr


def test_help_lists_the_commands():
    result = ssw("--help")
    assert result.returncode == 0
    for command in ("models", "prices", "probe"):
        assert command in result.stdout


def _sample_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "sample"
    shutil.copytree(REPO / "src" / "stepswitch" / "demo" / "sample", repo)
    return repo


def test_gates_prints_the_failing_test_and_exits_1(tmp_path):
    result = ssw("gates", str(_sample_repo(tmp_path)), "--changed", "textstats/stats.py")
    assert result.returncode == 1, result.stderr
    assert "tests:impacted" in result.stdout
    assert "test_runs_of_spaces_and_line_breaks_separate_words_once" in result.stdout


def test_a_misconfigured_gate_table_is_one_line_naming_the_key(tmp_path):
    repo = _sample_repo(tmp_path)
    (repo / ".stepswitch.toml").write_text('[gates.lint]\ncommand = "ruff check"\ntimout_s = 5\n')
    result = ssw("gates", str(repo))
    assert result.returncode == 2
    assert "gates.lint.timout_s" in result.stderr
    assert result.stderr.strip().count("\n") == 0


def test_help_lists_runs_and_run_takes_the_confinement_flags():
    assert "runs" in ssw("--help").stdout
    run_help = ssw("run", "--help").stdout
    for flag in ("--sandbox", "--allow-dirty", "--network"):
        assert flag in run_help
    assert "clean" in ssw("runs", "--help").stdout


FAKE_PRESET = """\
name = "fake"
display_name = "Fake"
base_url = "{url}"
wire_formats = ["chat-completions"]
local = true

[models."org/model-1"]
family = "fake"
context_window = 4000
capabilities = ["tools", "parallel_tool_calls", "json_schema", "streaming"]

[models."org/model-1".price]
input = 0.0
output = 0.0
source = "local"
as_of = 2026-01-01
"""


def _probe_cli(tmp_path: Path, responder) -> subprocess.CompletedProcess:
    from stepswitch.fakes.loopback import LoopbackServer

    root = tmp_path / "registry"
    (root / "providers").mkdir(parents=True)
    with LoopbackServer(responder) as server:
        preset = FAKE_PRESET.format(url=server.base_url)
        (root / "providers" / "fake.toml").write_text(preset)
        return ssw("probe", "fake", "org/model-1", "--out", str(tmp_path / "out"), registry=root)


def test_probe_exits_0_when_every_claim_holds_and_1_when_a_claimed_capability_fails(tmp_path):
    from tests.test_probe import make_server

    capable = _probe_cli(tmp_path / "capable", make_server())
    assert capable.returncode == 0, capable.stdout + capable.stderr
    assert "written: " in capable.stdout

    no_tools = _probe_cli(tmp_path / "no_tools", make_server(tools=False))
    assert no_tools.returncode == 1, no_tools.stdout + no_tools.stderr
    assert "the registry claims what these checks did not find: tool_call" in no_tools.stdout
    assert (tmp_path / "no_tools" / "out" / "probes" / "fake" / "org__model-1.json").exists()


def test_ssw_imports_httpx_without_its_command_line_client_or_httpcores_trio(tmp_path: Path):
    # `ssw run` speaks HTTP, so it imports httpx; httpx's own CLI (rich, click, pygments) is no
    # part of that, and was a sixth of the command's start; nor is httpcore's trio backend, a
    # tenth of it where trio is installed (ADR 0042). The client made after still works.
    said = tmp_path / "imported.json"
    code = (
        "import atexit, json, sys\n"
        "names = ('httpx', 'httpx._main', 'rich', 'pygments', 'httpcore', 'trio')\n"
        "def client_then_say():\n"
        "    import httpx\n"
        "    httpx.Client().close()\n"
        f"    open({str(said)!r}, 'w').write(json.dumps("
        "[n for n in names if sys.modules.get(n) is not None]))\n"
        "atexit.register(client_then_say)\n"
        "from stepswitch.cli import main\n"
        f"sys.argv = ['ssw', 'run', {str(tmp_path)!r}, '--task', 'x']\n"
        "main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and "git" in result.stderr, result.stderr
    assert json.loads(said.read_text()) == ["httpx", "httpcore"]
    assert importlib.util.find_spec("trio") is not None  # installed here: left out, not absent
