"""What each command's `--help` teaches beyond its options: a short line for the command lists,
one or two examples, the environment variables it reads, and for `ssw run` its exit codes (from
util/exit_codes.py, the table the run's end sets them by). Plain strings: `ssw --help` stays
fast."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from stepswitch.util.exit_codes import RUN_EXIT_CODES

WIDTH = 78

# The key variable of every shipped preset that takes a key (tests check it against them).
KEY_VARIABLES = (
    "NEBIUS_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "OPENROUTER_API_KEY",
    "OPENAI_COMPATIBLE_API_KEY",
)

ENVIRONMENT = {
    "keys": (
        ", ".join(KEY_VARIABLES),
        "the key of each provider used, named by its preset (registry/providers/NAME.toml); "
        "sent only to the preset's own host or one you trust (--trust-endpoint)",
    ),
    "SSW_REGISTRY": (
        "SSW_REGISTRY",
        "a folder of provider presets (providers/NAME.toml) to use instead of the shipped ones",
    ),
    "SSW_CACHE_DIR": (
        "SSW_CACHE_DIR",
        "your price cache (default: $XDG_CACHE_HOME/stepswitch, else ~/.cache/stepswitch)",
    ),
    "SSW_LEDGER": (
        "SSW_LEDGER",
        "the ledger, when --ledger is not given (default: REPO/.ssw/ledger.sqlite)",
    ),
    "OTEL": (
        "OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "send the run's trace to an OpenTelemetry collector (ADR 0033)",
    ),
}


@dataclass(frozen=True)
class CommandHelp:
    short: str  # the line in its group's command list, whole
    examples: tuple[str, ...]  # each a command line, starting with `ssw `
    env: tuple[str, ...] = ()  # keys of ENVIRONMENT
    exit_codes: bool = False


MODEL = "tokenfactory:openai/gpt-oss-120b"

HELP = {
    "init": CommandHelp(
        "Write a starter policy for a provider: a model per step, a ladder to escalate on.",
        ("ssw init tokenfactory", "ssw init anthropic --out team-policy.toml"),
        ("keys", "SSW_REGISTRY", "SSW_CACHE_DIR"),
    ),
    "run": CommandHelp(
        "Do a task in a worktree of a repository, on a new branch; commit the change.",
        (
            f'ssw run . --model {MODEL} --task "fix the failing test"',
            "ssw run . --policy .ssw/policy.toml --task-file task.md --budget-usd 2",
            "ssw run . --continue 20261207-101500-a1b2c3 --budget-usd 4",
        ),
        ("keys", "SSW_REGISTRY", "SSW_CACHE_DIR", "SSW_LEDGER", "OTEL"),
        exit_codes=True,
    ),
    "demo": CommandHelp(
        "A whole task on a sample repository with scripted replies: no key, no network.",
        ("ssw demo", "ssw demo --repo . --task 'add a --verbose flag'"),
        ("SSW_REGISTRY", "SSW_LEDGER", "OTEL"),
    ),
    "runs": CommandHelp(
        "A repository's runs: list them, show one, apply its change, clean up.",
        ("ssw runs", "ssw runs --repo ../other-repo --json"),
        ("SSW_LEDGER",),
    ),
    "runs show": CommandHelp(
        "What a run did, step by step, with its bill, verdicts and change.",
        ("ssw runs show 20261207-101500-a1b2c3", "ssw runs show 20261207-101500-a1b2c3 --diff"),
        ("SSW_LEDGER",),
    ),
    "runs apply": CommandHelp(
        "Apply a finished run's change to the current branch.",
        (
            "ssw runs apply 20261207-101500-a1b2c3",
            "ssw runs apply 20261207-101500-a1b2c3 --cherry-pick",
        ),
    ),
    "runs clean": CommandHelp(
        "Remove finished runs' worktrees and branches; records stay.",
        ("ssw runs clean --all", "ssw runs clean 20261207-101500-a1b2c3"),
        ("SSW_LEDGER",),
    ),
    "policy": CommandHelp(
        "Policy files: which worker takes which step.",
        ("ssw policy check .ssw/policy.toml",),
        ("SSW_REGISTRY",),
    ),
    "policy check": CommandHelp(
        "Which worker takes each step at each rung, without calling a model.",
        ("ssw policy check .ssw/policy.toml", "ssw policy check .ssw/policy.toml --runs .ssw/runs"),
        ("SSW_REGISTRY",),
    ),
    "policy suggest": CommandHelp(
        "A cheaper policy from measured steps, and the commands that would test it.",
        ("ssw policy suggest .ssw/runs --policy .ssw/policy.toml --out suggested.toml",),
        ("SSW_REGISTRY",),
    ),
    "models": CommandHelp(
        "The models of the presets: prices, efforts, context, capabilities.",
        ("ssw models", "ssw models --provider tokenfactory --json"),
        ("SSW_REGISTRY",),
    ),
    "prices": CommandHelp(
        "Every model's list prices and where each came from; refresh them.",
        ("ssw prices", "ssw prices refresh tokenfactory"),
        ("SSW_REGISTRY", "SSW_CACHE_DIR"),
    ),
    "prices refresh": CommandHelp(
        "Read a provider's priced model list into your price cache.",
        (
            "ssw prices refresh tokenfactory",
            "ssw prices refresh openai-compatible --base-url http://gpu-box:8000/v1/",
        ),
        ("keys", "SSW_REGISTRY", "SSW_CACHE_DIR"),
    ),
    "probe": CommandHelp(
        "Check what a model really does: tools, JSON schema, streaming, usage, efforts.",
        (
            "ssw probe tokenfactory openai/gpt-oss-120b",
            "ssw probe vllm my-model --base-url http://127.0.0.1:8000/v1/ --skip-context",
        ),
        ("keys", "SSW_REGISTRY"),
    ),
    "ledger": CommandHelp(
        "Calls, tokens and dollars per model, step type, task, worker or tag.",
        ("ssw ledger", "ssw ledger --by worker --run 20261207-101500-a1b2c3"),
        ("SSW_LEDGER",),
    ),
    "gates": CommandHelp(
        "Run a repository's gates as a run would, outside a task.",
        ("ssw gates .", "ssw gates . --changed src/app/io.py"),
    ),
    "bench": CommandHelp(
        "Benchmark task suites: validate, run, summarise, import, export.",
        ("ssw bench validate bench/suites/general",),
    ),
    "bench run": CommandHelp(
        "Run every contestant on every task; the same command resumes.",
        (
            "ssw bench run --suite bench/suites/general --contestant oracle --contestant null",
            "ssw bench run --suite bench/suites/humaneval --contestant "
            "bench/policies/tokenfactory-ladder.toml --budget-usd-total 5",
        ),
        ("keys", "SSW_REGISTRY", "SSW_CACHE_DIR"),
    ),
    "bench validate": CommandHelp(
        "Check each task: its start fails its hidden tests, its reference passes them.",
        ("ssw bench validate bench/suites/general", "ssw bench validate bench/suites/* --jobs 2"),
    ),
    "bench summary": CommandHelp(
        "Pass rates, dollars, tokens and time per contestant, with paired differences.",
        ("ssw bench summary bench/runs/oracle-vs-null.all-suites.2026-12-02",),
    ),
    "bench import": CommandHelp(
        "Write a task suite from a public data set or another harness's tasks.",
        (
            "ssw bench import humaneval --out bench/suites/humaneval",
            "ssw bench import harbor ../harbor-tasks --out bench/suites/harbor",
        ),
    ),
    "bench cluster-certs": CommandHelp(
        "Certificates for a Dask cluster that runs bench tasks.",
        ("ssw bench cluster-certs certs --host 10.0.0.5",),
    ),
    "bench export": CommandHelp(
        "Write a suite's tasks in another harness's layout (Harbor).",
        ("ssw bench export bench/suites/general harbor-tasks --format harbor",),
    ),
    "claims": CommandHelp(
        "The claims behind the README's numbers: register them before their runs.",
        ("ssw claims list", "ssw claims register C-001"),
    ),
    "claims register": CommandHelp(
        "Register a claim before the runs it depends on.",
        ("ssw claims register C-001",),
    ),
    "claims list": CommandHelp(
        "Each claim: id, status, when it was registered, title.",
        ("ssw claims list",),
    ),
    "prove": CommandHelp(
        "Recompute every claim from committed evidence, offline.",
        ("ssw prove", "ssw prove --check --claim C-006"),
    ),
    "site": CommandHelp(
        "The replay page: recorded runs, step by step.",
        ("ssw site build",),
        ("SSW_LEDGER",),
    ),
    "site build": CommandHelp(
        "One static page that replays the runs, side by side and step by step.",
        (
            "ssw site build",
            "ssw site build bench/runs/oracle-vs-null.all-suites.2026-12-02 --out site",
        ),
        ("SSW_LEDGER",),
    ),
    "serve": CommandHelp(
        "A local read-only dashboard: runs in progress, past runs, the ledger.",
        ("ssw serve", "ssw serve --runs bench/runs --port 0"),
        ("SSW_LEDGER",),
    ),
}


def _wrapped(text: str, indent: int) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent="  ", subsequent_indent=" " * indent)


def _block(title: str, lines: list[str]) -> str:
    # "\b": Click prints the paragraph as written, one line a line.
    return f"{title}:\n\n\b\n" + "\n".join(lines)


def epilog(command: CommandHelp) -> str:
    """The epilog: examples, environment, exit codes."""
    blocks = [_block("Examples", [f"  {line}" for line in command.examples])]
    if command.env:
        rows = [ENVIRONMENT[name] for name in command.env]
        env = [line for name, meaning in rows for line in _wrapped(f"{name}: {meaning}", 6)]
        blocks.append(_block("Environment", env))
    if command.exit_codes:
        codes = [
            line for c, meaning in RUN_EXIT_CODES for line in _wrapped(f"{c:<3}  {meaning}", 7)
        ]
        blocks.append(_block("Exit codes", codes))
    return "\n\n".join(blocks)


def teach(command: object, path: str = "") -> None:
    """Give `command` and its subcommands, in place, their short line and epilog."""
    for name, sub in getattr(command, "commands", {}).items():
        where = f"{path} {name}".strip()
        found = HELP.get(where)
        if found is not None:
            sub.short_help = found.short
            sub.epilog = epilog(found)
        teach(sub, where)
