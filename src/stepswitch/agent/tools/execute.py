"""The tool registry and execute_call: a model's tool call in, a ToolResult out, never a raise.

Tools, by name: list_dir, find_files, search, read, edit, write_file, run, done. A model's
mistake (bad JSON, a wrong argument, a path outside the repository, a protected file) comes back
as a refused result whose output tells the model what to do instead.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from stepswitch.agent.tools.base import FunctionTool, Tool, ToolResult, cap_text, refuse, schema
from stepswitch.agent.tools.edits import EDIT, READ_PREFIX_RE, WRITE_FILE
from stepswitch.agent.tools.files import FIND_FILES, LIST_DIR, READ, SEARCH
from stepswitch.agent.tools.shell import RUN
from stepswitch.agent.workspace.paths import PathRefused, Workspace
from stepswitch.errors import UsageError
from stepswitch.wire.types import ToolCall, ToolSpec

__all__ = [
    "READ_PREFIX_RE",
    "TOOLS",
    "PathRefused",
    "Tool",
    "ToolResult",
    "Workspace",
    "execute_call",
    "parse_arguments",
    "tool_spec",
]

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}
_NUMERIC = re.compile(r"^\s*-?\d+(\.\d+)?\s*$")
_OUTPUT_SLACK = 400  # room for the notes and headers tools add around output they capped already


class ArgumentsRefused(Exception):
    """The arguments cannot be used as sent; the message tells the model how to send them."""


def _done(ws: Workspace, args: dict[str, Any]) -> ToolResult:
    return ToolResult(output=args["summary"].strip() or "(done)", finished=True)


DONE = FunctionTool(
    "done",
    "Finish this step. Say in a few lines what you changed and why.",
    schema({"summary": {"type": "string", "description": "What was done, briefly."}}, ("summary",)),
    _done,
    aliases={"message": "summary"},
)

TOOLS: dict[str, Tool] = {
    tool.name: tool for tool in (LIST_DIR, FIND_FILES, SEARCH, READ, EDIT, WRITE_FILE, RUN, DONE)
}


def tool_spec(name: str) -> ToolSpec:
    tool = TOOLS.get(name)
    if tool is None:
        raise UsageError(f"unknown tool {name!r}; the tools are: {', '.join(TOOLS)}")
    return ToolSpec(tool.name, tool.description, tool.parameters)


def parse_arguments(raw: str) -> dict[str, Any]:
    """The arguments as an object; empty means none, and a JSON string of an object is unwrapped."""
    how = 'Send the arguments as one JSON object, e.g. {"path": "src/x.py"}.'
    value: Any = raw
    for _ in range(2):  # once for the text, once more when the model sent the object as a string
        if not isinstance(value, str):
            break
        if not value.strip():
            return {}
        try:
            value = json.loads(value)
        except json.JSONDecodeError as err:
            raise ArgumentsRefused(f"The arguments are not valid JSON ({err}). {how}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ArgumentsRefused(
            f"The arguments must be a JSON object, not {type(value).__name__}. {how}"
        )
    return value


def _signature(tool: Tool) -> str:
    props: dict[str, Any] = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))
    parts = [
        f"{name} ({spec.get('type', 'any')}{', required' if name in required else ''})"
        for name, spec in props.items()
    ]
    return ", ".join(parts) if parts else "no arguments"


def _coerce(value: Any, kind: str | None) -> tuple[bool, Any]:
    """Whether value fits the JSON type, and the value to use (10.0 -> 10, "10" -> 10)."""
    if kind is None or kind not in _JSON_TYPES:
        return True, value
    if kind in ("integer", "number") and isinstance(value, str) and _NUMERIC.match(value):
        value = float(value) if "." in value else int(value)
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) and kind != "boolean":
        return False, value
    return isinstance(value, _JSON_TYPES[kind]), value


def check_arguments(tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
    """Arguments under the schema's names, with aliases mapped and optional nulls dropped."""
    props: dict[str, Any] = tool.parameters.get("properties", {})
    required: list[str] = tool.parameters.get("required", [])
    named: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in args.items():
        name = tool.aliases.get(key, key)
        if name in named:
            problems.append(f"{name!r} twice (as {key!r} too)")
        elif value is not None or name in required:
            named[name] = value
    problems += [f"unexpected argument {k!r}" for k in named if k not in props]
    problems += [f"no {k!r}" for k in required if k not in named]
    for key in [k for k in named if k in props]:
        kind = props[key].get("type")
        fits, named[key] = _coerce(named[key], kind)
        if not fits:
            problems.append(f"{key!r} as {type(named[key]).__name__}, not {kind}")
    if problems:
        raise ArgumentsRefused(
            f"{tool.name} was called with {'; '.join(problems)}. It takes {_signature(tool)}. "
            "Call it again with a JSON object of those arguments."
        )
    return named


def execute_call(ws: Workspace, call: ToolCall, allowed: frozenset[str]) -> ToolResult:
    """Run one tool call; model mistakes come back as refused results, never as exceptions."""
    offered = ", ".join(name for name in TOOLS if name in allowed) or "none"
    tool = TOOLS.get(call.name)
    if tool is None:
        return refuse(
            f"There is no tool named {call.name!r}. The tools for this step are: {offered}. "
            "Call one of them."
        )
    if call.name not in allowed:
        return refuse(
            f"{call.name} is not available in this step. The tools for this step are: "
            f"{offered}. Use one of them instead."
        )
    try:
        result = tool.run(ws, check_arguments(tool, parse_arguments(call.arguments)))
    except (ArgumentsRefused, PathRefused) as err:
        return refuse(str(err))
    except (
        OSError,
        UnicodeError,
    ) as err:  # the file system said no: report it, let the model adapt
        return ToolResult(output=f"{call.name} failed: {err}. Try another way.", ok=False)
    if len(result.output) > ws.output_cap_chars + _OUTPUT_SLACK:
        capped = cap_text(result.output, ws.output_cap_chars, "narrow the request to see it")
        result = dataclasses.replace(result, output=capped)
    return result
