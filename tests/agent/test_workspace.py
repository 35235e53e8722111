from pathlib import Path

import pytest

from stepswitch.agent.workspace.paths import PathRefused, Workspace
from stepswitch.util.globs import glob_match


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (root / ".git").mkdir()
    return Workspace(root, protected=("tests/golden", "gate.toml", "**/*.snap"))


def test_resolve_maps_relative_paths_against_the_root(ws):
    assert ws.resolve("src/pkg/mod.py") == ws.root / "src" / "pkg" / "mod.py"
    assert ws.resolve("./src/../src/pkg") == ws.root / "src" / "pkg"
    assert ws.resolve("") == ws.root


@pytest.mark.parametrize("prefix", ["/repo", "/workspace", "/testbed", "/app", "/code"])
def test_resolve_maps_container_style_absolute_paths_into_the_root(ws, prefix):
    assert ws.resolve(f"{prefix}/src/pkg/mod.py") == ws.root / "src" / "pkg" / "mod.py"
    assert ws.resolve(prefix) == ws.root


def test_resolve_accepts_absolute_paths_already_under_the_root(ws):
    assert ws.resolve(str(ws.root / "src")) == ws.root / "src"


def test_root_is_stored_resolved_so_unresolved_roots_still_contain_their_files(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    ws = Workspace(tmp_path / "alias")
    assert ws.root == (tmp_path / "real").resolve()
    assert ws.resolve(str(tmp_path / "alias" / "a.py")) == ws.root / "a.py"


@pytest.mark.parametrize("path", ["../outside.txt", "src/../../x", "/repo/../etc/passwd"])
def test_resolve_refuses_paths_that_climb_out_of_the_root(ws, path):
    with pytest.raises(PathRefused):
        ws.resolve(path)


def test_resolve_refuses_a_path_with_a_nul_character(ws):
    with pytest.raises(PathRefused, match="NUL"):
        ws.resolve("src/\0x")


def test_resolve_refuses_other_absolute_paths(ws):
    with pytest.raises(PathRefused, match=r"use a path relative to its root, e\.g\. src/x\.py"):
        ws.resolve("/etc/passwd")


def test_resolve_refuses_a_symlink_that_leads_outside(ws, tmp_path):
    (tmp_path / "secret.txt").write_text("s")
    (ws.root / "link").symlink_to(tmp_path)
    with pytest.raises(PathRefused, match="symbolic link"):
        ws.resolve("link/secret.txt")


def test_resolve_follows_a_symlink_that_stays_inside(ws):
    (ws.root / "alias.py").symlink_to(ws.root / "src" / "pkg" / "mod.py")
    assert ws.resolve("alias.py") == ws.root / "src" / "pkg" / "mod.py"


def test_resolve_refuses_a_loop_of_links_instead_of_raising(ws):
    (ws.root / "loop").symlink_to(ws.root / "loop")
    with pytest.raises(PathRefused, match="loop of symbolic links"):
        ws.resolve("loop/x")


def test_lexical_names_the_path_by_its_text_without_following_links(ws, tmp_path):
    (ws.root / "out").symlink_to(tmp_path)
    assert ws.lexical("out/secret.txt") == "out/secret.txt"  # safe_fs refuses it when opened
    assert ws.lexical("/repo/src/./pkg//mod.py") == "src/pkg/mod.py"
    assert ws.lexical(str(ws.root / "src" / "pkg" / "..")) == "src"
    assert ws.lexical(str(ws.root)) == "."
    with pytest.raises(PathRefused):
        ws.lexical("src/../../x")


def test_lexical_maps_an_absolute_path_under_another_name_of_the_root(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    ws = Workspace(tmp_path / "alias")
    assert ws.lexical(str(tmp_path / "alias" / "src" / "a.py")) == "src/a.py"


def test_path_refused_message_names_the_path_and_the_fix(ws):
    with pytest.raises(PathRefused) as info:
        ws.resolve("../x")
    assert "'../x'" in str(info.value)
    assert "paths must be inside the repository" in str(info.value)


def test_protected_patterns_cover_files_and_everything_under_folders(ws):
    assert ws.protected_by("gate.toml") == "gate.toml"
    assert ws.protected_by("tests/golden/out/a.txt") == "tests/golden"
    assert ws.protected_by("/repo/deep/x.snap") == "**/*.snap"
    assert not ws.is_protected("src/pkg/mod.py")
    assert not ws.is_protected("sub/gate.toml")  # patterns are anchored at the root


def test_protected_by_does_not_raise_when_a_folder_has_become_a_link_leading_out(ws, tmp_path):
    # It used to resolve the path a second time and crash the run with a ValueError.
    (tmp_path / "host").mkdir()
    (ws.root / "tests").symlink_to(tmp_path / "host")
    assert ws.protected_by(ws.root / "tests" / "golden" / "a.txt") == "tests/golden"
    assert ws.protected_by(ws.root / "tests" / "other.txt") is None


def test_git_data_is_always_protected(ws):
    assert ws.protected_by(".git/hooks/pre-commit") == ".git"


def test_command_env_drops_keys_tokens_and_passwords(ws, monkeypatch):
    for name in ("FOO_API_KEY", "GITHUB_TOKEN", "AWS_SECRET", "DB_PASSWORD", "MY_KEY", "CUSTOM"):
        monkeypatch.setenv(name, "x")
    monkeypatch.setenv("PATH", "/usr/bin")
    monkeypatch.setenv("HOME", "/home/u")
    env = Workspace(ws.root, secret_env_names=frozenset({"CUSTOM"})).command_env()
    assert not {"FOO_API_KEY", "GITHUB_TOKEN", "AWS_SECRET", "DB_PASSWORD", "MY_KEY"} & set(env)
    assert "CUSTOM" not in env
    assert env["PATH"] == "/usr/bin"
    assert env["HOME"] == "/home/u"


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "src/pkg/a.py", True),
        ("src/*.py", "src/pkg/a.py", False),
        ("src/**", "src/pkg/a.py", True),
        ("*.py", "src/pkg/a.py", True),  # no "/": matches the base name at any depth
        ("test_?.py", "tests/test_a.py", True),
        ("[ab].txt", "c.txt", False),
    ],
)
def test_glob_match_spans_folders_only_with_double_star(pattern, path, expected):
    assert glob_match(pattern, path) is expected
