import json
import os
import select
from pathlib import Path
from typing import Any

import pytest

from stepswitch.agent.tools.execute import (
    READ_PREFIX_RE,
    TOOLS,
    ToolResult,
    Workspace,
    execute_call,
    tool_spec,
)
from stepswitch.errors import UsageError
from stepswitch.wire.types import ToolCall, ToolSpec

ALL = frozenset(TOOLS)
MOD = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "mod.py").write_text(MOD)
    (root / "src" / "pkg" / "__init__.py").write_text("")
    (root / "tests" / "golden").mkdir(parents=True)
    (root / "tests" / "golden" / "out.txt").write_text("expected\n")
    (root / "README.md").write_text("# Demo\nadd numbers\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("add = secret\n")
    return Workspace(root, protected=("tests/golden",), command_timeout_s=10)


def call(ws: Workspace, name: str, allowed: frozenset[str] = ALL, **args: Any) -> ToolResult:
    return execute_call(ws, ToolCall("c1", name, json.dumps(args)), allowed)


def raw_call(ws: Workspace, name: str, arguments: str) -> ToolResult:
    return execute_call(ws, ToolCall("c1", name, arguments), ALL)


# list_dir


def test_list_dir_shows_sorted_entries_with_folders_marked_and_git_hidden(ws):
    result = call(ws, "list_dir")
    assert result.ok
    assert result.output.splitlines() == ["README.md", "src/", "tests/"]


def test_list_dir_stops_at_its_limit_and_says_so(ws):
    many = ws.root / "many"
    many.mkdir()
    for i in range(510):
        (many / f"f{i:03}").touch()
    result = call(ws, "list_dir", path="many")
    assert len(result.output.splitlines()) == 501
    assert "10 more entries not shown" in result.output


def test_list_dir_of_a_missing_folder_is_refused_with_a_pointer_to_find_files(ws):
    result = call(ws, "list_dir", path="nope")
    assert result.refused
    assert "find_files" in result.output


# find_files


def test_find_files_globs_across_folders_and_returns_root_relative_paths(ws):
    assert call(ws, "find_files", pattern="**/*.py").output.splitlines() == [
        "src/pkg/__init__.py",
        "src/pkg/mod.py",
    ]


def test_find_files_matches_base_names_at_any_depth_and_skips_git(ws):
    assert call(ws, "find_files", pattern="mod.py").output == "src/pkg/mod.py"
    assert "No files match" in call(ws, "find_files", pattern="config").output


def test_find_files_under_a_folder_still_returns_root_relative_paths(ws):
    assert call(ws, "find_files", pattern="*.txt", path="tests").output == "tests/golden/out.txt"


# search


def test_search_prints_path_line_and_text_for_each_match(ws):
    result = call(ws, "search", pattern=r"def \w+\(a")
    assert result.output.splitlines() == [
        "src/pkg/mod.py:1: def add(a, b):",
        "src/pkg/mod.py:5: def sub(a, b):",
    ]


def test_search_skips_git_and_binary_files_and_honours_glob(ws):
    (ws.root / "blob.bin").write_bytes(b"add\0\x01")
    result = call(ws, "search", pattern="add", glob="*.md")
    assert result.output == "README.md:2: add numbers"
    assert ".git" not in call(ws, "search", pattern="secret").output
    assert "blob.bin" not in call(ws, "search", pattern="add").output


def test_search_cuts_long_lines(ws):
    (ws.root / "long.txt").write_text("needle" + "x" * 1000 + "\n")
    line = call(ws, "search", pattern="needle").output
    assert len(line) < 260
    assert line.endswith("[...]")


def test_search_with_an_invalid_regex_is_refused_with_the_error(ws):
    result = call(ws, "search", pattern="add(")
    assert result.refused
    assert "missing ), unterminated subpattern" in result.output
    assert "escape" in result.output


# read


def test_read_numbers_lines_in_the_documented_format(ws):
    lines = call(ws, "read", path="src/pkg/mod.py").output.splitlines()
    assert lines[0] == "     1\tdef add(a, b):"
    assert all(READ_PREFIX_RE.match(line) for line in lines)
    assert len(lines) == 6


def test_read_returns_the_asked_range(ws):
    output = call(ws, "read", path="src/pkg/mod.py", start_line=5, end_line=6).output
    assert output.splitlines()[0] == "     5\tdef sub(a, b):"
    assert "read on" not in output


def test_read_stops_at_its_line_limit_and_says_where_to_continue(ws):
    (ws.root / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 1001)))
    output = call(ws, "read", path="big.txt").output
    assert "   400\tline 400" in output
    assert "   401\t" not in output
    assert "start_line=401" in output


def test_read_stops_at_the_output_cap(ws):
    (ws.root / "wide.txt").write_text(("y" * 100 + "\n") * 300)
    small = Workspace(ws.root, output_cap_chars=1000)
    output = call(small, "read", path="wide.txt").output
    assert len(output) < 1200
    assert "start_line=10" in output


def test_read_accepts_repo_and_workspace_prefixed_paths(ws):
    assert call(ws, "read", path="/repo/README.md").output.startswith("     1\t# Demo")
    assert call(ws, "read", path="/workspace/README.md").ok


def test_read_of_a_missing_file_is_refused_with_a_pointer_to_find_files(ws):
    result = call(ws, "read", path="src/pkg/missing.py")
    assert result.refused
    assert "find_files" in result.output
    assert "'**/missing.py'" in result.output


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd"])
def test_read_outside_the_repository_is_refused(ws, path):
    result = call(ws, "read", path=path)
    assert result.refused
    assert "relative to its root" in result.output


def test_read_through_a_symlink_that_escapes_is_refused(ws, tmp_path):
    (tmp_path / "secret.txt").write_text("s")
    (ws.root / "leak.txt").symlink_to(tmp_path / "secret.txt")
    assert call(ws, "read", path="leak.txt").refused


# edit


def test_edit_replaces_the_one_exact_match_and_reports_the_changed_path(ws):
    result = call(ws, "edit", path="src/pkg/mod.py", old="return a - b", new="return b - a")
    assert result.ok
    assert result.changed_paths == ("src/pkg/mod.py",)
    assert "return b - a" in (ws.root / "src/pkg/mod.py").read_text()
    assert "     6\t    return b - a" in result.output


def test_edit_strips_read_line_prefixes_from_old_and_new(ws):
    old = "     5\tdef sub(a, b):\n     6\t    return a - b"
    new = "     5\tdef sub(a, b):\n     6\t    return -(b - a)"
    result = call(ws, "edit", path="src/pkg/mod.py", old=old, new=new)
    assert result.ok
    assert (
        (ws.root / "src/pkg/mod.py").read_text().endswith("def sub(a, b):\n    return -(b - a)\n")
    )


@pytest.mark.parametrize(("old_key", "new_key"), [("old_str", "new_str"), ("old_text", "new_text")])
def test_edit_accepts_common_argument_aliases(ws, old_key, new_key):
    args = {"path": "src/pkg/mod.py", old_key: "a + b", new_key: "b + a"}
    assert call(ws, "edit", **args).changed_paths == ("src/pkg/mod.py",)


def test_edit_keeps_crlf_line_endings(ws):
    (ws.root / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    assert call(ws, "edit", path="win.txt", old="one\ntwo", new="1\n2").ok
    assert (ws.root / "win.txt").read_bytes() == b"1\r\n2\r\n"


def test_edit_keeps_bytes_that_are_not_utf8(ws):
    (ws.root / "latin1.txt").write_bytes(b"caf\xe9 = 1\nx = 2\n")
    assert call(ws, "edit", path="latin1.txt", old="x = 2", new="x = 3").ok
    assert (ws.root / "latin1.txt").read_bytes() == b"caf\xe9 = 1\nx = 3\n"


def test_edit_with_no_match_is_refused_showing_the_nearest_lines(ws):
    result = call(ws, "edit", path="src/pkg/mod.py", old="  return a-b", new="x")
    assert result.refused
    assert "near line 6" in result.output
    assert "     6\t    return a - b" in result.output
    assert "Read the file again" in result.output
    assert (ws.root / "src/pkg/mod.py").read_text() == MOD


def test_edit_with_two_matches_is_refused_asking_for_more_context(ws):
    result = call(ws, "edit", path="src/pkg/mod.py", old="(a, b):", new="(x):")
    assert result.refused
    assert "2 places" in result.output
    assert "lines 1, 5" in result.output
    assert "more of the surrounding lines" in result.output


def test_edit_of_a_protected_file_is_refused_naming_the_pattern(ws):
    result = call(ws, "edit", path="tests/golden/out.txt", old="expected", new="whatever")
    assert result.refused
    assert "'tests/golden'" in result.output
    assert (ws.root / "tests/golden/out.txt").read_text() == "expected\n"


# write_file


def test_write_file_creates_missing_folders_and_reports_the_changed_path(ws):
    result = call(ws, "write_file", path="/workspace/new/deep/x.py", content="x = 1\n")
    assert result.changed_paths == ("new/deep/x.py",)
    assert (ws.root / "new/deep/x.py").read_text() == "x = 1\n"


def test_write_file_over_a_script_keeps_it_executable(ws):
    script = ws.root / "run.sh"
    script.write_text("echo 1\n")
    script.chmod(0o755)
    assert call(ws, "write_file", path="run.sh", content="echo 2\n").output.startswith("Overwrote")
    assert script.read_text() == "echo 2\n"
    assert os.access(script, os.X_OK)


def test_write_file_to_a_protected_path_is_refused(ws):
    result = call(ws, "write_file", path="tests/golden/new.txt", content="x")
    assert result.refused
    assert not (ws.root / "tests/golden/new.txt").exists()


def test_write_file_outside_the_repository_is_refused(ws, tmp_path):
    result = call(ws, "write_file", path="../evil.txt", content="x")
    assert result.refused
    assert not (tmp_path / "evil.txt").exists()


# run


def test_run_reports_the_exit_code_first_and_merges_stderr(ws):
    result = call(ws, "run", command="echo out; echo err >&2; exit 3")
    assert result.exit_code == 3
    assert not result.ok
    assert result.output.splitlines()[0].startswith("exit code 3")
    assert "out" in result.output
    assert "err" in result.output
    assert result.changed_paths == ()


def test_run_honours_a_leading_cd_into_a_subfolder(ws):
    result = call(ws, "run", command="cd /repo/src && pwd")
    assert result.ok
    assert result.output.splitlines()[1] == str(ws.root / "src")


def test_run_refuses_a_leading_cd_out_of_the_repository(ws):
    assert call(ws, "run", command="cd /etc && cat passwd").refused


def test_run_kills_the_whole_process_group_at_the_timeout(ws):
    # Had the tool waited, the shell would have ended by itself with exit 0, not 124.
    result = call(ws, "run", command="sleep 30 & echo $! > child.pid; sleep 30", timeout_s=0.5)
    assert result.exit_code == 124
    assert "timed out" in result.output
    child = int((ws.root / "child.pid").read_text())
    assert child_is_gone_within(Path(f"/proc/{child}/stat"), seconds=3)


def child_is_gone_within(stat: Path, seconds: float) -> bool:
    """Whether the process /proc/<pid>/stat names exits (a zombie counts) within `seconds`.
    SIGKILL is delivered asynchronously: block on a pidfd, which is readable once the process
    has exited, instead of spinning on /proc (that spin stole a core from the kill it awaited)."""
    try:
        pidfd = os.pidfd_open(int(stat.parent.name))
    except ProcessLookupError:
        return True  # already reaped
    try:
        readable, _, _ = select.select([pidfd], [], [], seconds)
        return bool(readable)
    finally:
        os.close(pidfd)


def test_run_returns_when_the_shell_exits_and_kills_its_background_children(ws):
    # The child writes `finished` only if it lives out its sleep: had the tool waited for it,
    # the file would be there when the call returns.
    command = "(sleep 30; echo yes > finished) & echo $! > child.pid; echo started"
    result = call(ws, "run", command=command)
    assert result.exit_code == 0
    assert not (ws.root / "finished").exists()
    child = int((ws.root / "child.pid").read_text())
    assert child_is_gone_within(Path(f"/proc/{child}/stat"), seconds=3)
    assert not (ws.root / "finished").exists()


def test_run_caps_long_output_keeping_head_and_tail(ws):
    small = Workspace(ws.root, output_cap_chars=1000)
    result = call(
        small, "run", command="echo START; head -c 100000 /dev/zero | tr '\\0' x; echo END"
    )
    assert len(result.output) < 1200
    assert "START" in result.output
    assert result.output.rstrip().endswith("END")
    assert "characters cut" in result.output


def test_run_environment_has_no_api_keys(ws, monkeypatch):
    monkeypatch.setenv("FOO_API_KEY", "sk-test")
    output = call(ws, "run", command="env").output
    assert "FOO_API_KEY" not in output
    assert "sk-test" not in output
    assert "PATH=" in output


# done


def test_done_finishes_and_echoes_the_summary(ws):
    result = call(ws, "done", summary="Fixed sub.")
    assert result.finished
    assert result.output == "Fixed sub."


# execute_call


def test_unknown_tool_is_refused_naming_the_tools_of_this_step(ws):
    result = execute_call(ws, ToolCall("c1", "grep", "{}"), frozenset({"read", "search"}))
    assert result.refused
    assert "search, read" in result.output


def test_tool_not_allowed_in_this_step_is_refused(ws):
    result = execute_call(ws, ToolCall("c1", "edit", "{}"), frozenset({"read", "done"}))
    assert result.refused
    assert "not available in this step" in result.output
    assert "read, done" in result.output


def test_invalid_json_is_refused_quoting_the_parse_error(ws):
    result = raw_call(ws, "read", '{"path": "README.md"')
    assert result.refused
    assert "Expecting" in result.output
    assert "JSON object" in result.output


def test_arguments_sent_as_a_json_string_are_parsed_again(ws):
    inner = json.dumps({"path": "src/pkg/mod.py", "old": "a + b", "new": "b + a"})
    assert raw_call(ws, "edit", json.dumps(inner)).changed_paths == ("src/pkg/mod.py",)


def test_empty_arguments_mean_none(ws):
    assert raw_call(ws, "list_dir", "").ok


def test_missing_and_extra_arguments_are_refused_naming_the_expected_ones(ws):
    result = call(ws, "read", file="README.md")
    assert result.refused
    assert "unexpected argument 'file'" in result.output
    assert "no 'path'" in result.output
    assert "path (string, required), start_line (integer), end_line (integer)" in result.output


def test_wrong_typed_arguments_are_refused(ws):
    result = call(ws, "read", path="README.md", start_line="first")
    assert result.refused
    assert "'start_line' as str, not integer" in result.output


def test_numeric_strings_and_nulls_are_tolerated(ws):
    result = call(ws, "read", path="README.md", start_line="2", end_line=None)
    assert result.output == "     2\tadd numbers"


def test_non_object_arguments_are_refused(ws):
    assert raw_call(ws, "read", "[1, 2]").refused


def test_tool_spec_describes_each_tool_for_the_wire(ws):
    spec = tool_spec("edit")
    assert isinstance(spec, ToolSpec)
    assert spec.parameters["required"] == ["path", "old", "new"]
    with pytest.raises(UsageError):
        tool_spec("nope")
