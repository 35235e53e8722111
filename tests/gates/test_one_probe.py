"""One start of the gates' interpreter answers both questions the gates ask of it, which modules
its environment provides (`ssw:shadowing`) and which pytest plugins it declares, in either order
(ADR 0091); the answer kept from an early probe is the one a fresh probe gives after the agent
wrote a plugin and a shadowing module into the tree, and the shadowing check still names it."""

from __future__ import annotations

import sys
from pathlib import Path

from stepswitch.gates.plugins import ask_plugins_early, declared_plugins
from stepswitch.gates.probe import ask_environment, end_early_probes, environment
from stepswitch.gates.shadowing import provided_names, shadowing_modules
from tests.gates.test_tree_plugins import plant_plugin


def counted_python(folder: Path) -> tuple[Path, Path]:
    """A `python` that notes each start in a log, then is this interpreter; and the log."""
    folder.mkdir(parents=True)
    log = folder / "starts.log"
    python = folder / "python"
    python.write_text(f'#!/bin/sh\necho start >> "{log}"\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    return python, log


def starts(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_plugins_then_shadowing_start_the_interpreter_once(tmp_path: Path) -> None:
    python, log = counted_python(tmp_path / "env")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "argparse.py").write_text("")

    plugins = declared_plugins(python, tree)
    found = shadowing_modules([tree], tree, set(), python)

    assert plugins == declared_plugins(Path(sys.executable), tree)  # the interpreter it runs
    assert found == ["argparse.py: added, and shadows the standard library's module argparse"]
    assert starts(log) == 1


def test_shadowing_first_then_plugins_start_the_interpreter_once(tmp_path: Path) -> None:
    python, log = counted_python(tmp_path / "env")
    tree = tmp_path / "tree"

    stdlib, installed = provided_names(python, tree)
    plugins = declared_plugins(python, tree)

    assert "json" in stdlib and "pytest" in installed
    assert plugins == declared_plugins(python, tree)
    assert starts(log) == 1


def test_an_early_answer_is_the_one_a_fresh_probe_gives_after_the_agent_wrote(
    tmp_path: Path,
) -> None:
    # `ssw run` asks before the worktree exists; the agent then writes a plugin's metadata, its
    # module and a module named as the standard library's into the tree.
    python, log = counted_python(tmp_path / "env")
    tree = tmp_path / "worktree"
    ask_plugins_early(python, tree)
    end_early_probes()
    tree.mkdir()
    plant_plugin(tree, "x-1.0.dist-info", entry_name="x", module="xplug")
    (tree / "json.py").write_text("")

    kept = environment(python, tree)
    found = shadowing_modules([tree], tree, set(), python)

    assert kept == ask_environment(python, tree)  # asked afresh, now: the same
    assert "x" not in declared_plugins(python, tree)
    assert "json.py: added, and shadows the standard library's module json" in found
    assert starts(log) == 2  # the early probe, and the fresh one this test asked for


def test_an_interpreter_that_cannot_answer_gives_empty_answers_once(tmp_path: Path) -> None:
    broken = tmp_path / "python"
    broken.write_text(f'#!/bin/sh\necho start >> "{tmp_path / "starts.log"}"\nexit 1\n')
    broken.chmod(0o755)

    assert declared_plugins(broken, tmp_path) == {}
    assert provided_names(broken, tmp_path) == (frozenset(), {})
    assert starts(tmp_path / "starts.log") == 1


def test_a_second_tree_of_the_same_interpreter_is_asked_only_of_its_plugins(
    tmp_path: Path,
) -> None:
    """What an interpreter provides needs no tree: the first probe of it answers that for every
    later tree, whose probe lists only the plugins (the list of every distribution's files is
    the probe's dearest part); the shadowing check of the second tree still names its module."""
    python, log = counted_python(tmp_path / "env")
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (second / "argparse.py").write_text("")

    assert provided_names(python, first)[0]
    plugins = declared_plugins(python, second)
    found = shadowing_modules([second], second, set(), python)

    assert plugins == declared_plugins(Path(sys.executable), second)
    assert found == ["argparse.py: added, and shadows the standard library's module argparse"]
    assert starts(log) == 2
    assert environment(python, second)["provided"] is None  # not asked again
