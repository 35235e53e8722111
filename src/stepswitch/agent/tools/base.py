"""What a tool returns, what a tool is, and the helpers every tool shares."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from stepswitch.agent.workspace.paths import Workspace


@dataclass(frozen=True)
class ToolResult:
    output: str  # what the model sees
    ok: bool = True
    refused: bool = False  # the call was a mistake the model can fix; output names the fix
    changed_paths: tuple[str, ...] = ()  # root-relative posix paths written (run: the caller diffs)
    finished: bool = False  # the done tool
    exit_code: int | None = None  # run only


class Tool(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def parameters(self) -> dict[str, Any]: ...  # JSON schema of the arguments
    @property
    def aliases(self) -> Mapping[str, str]: ...  # other names models use -> the schema's name

    def run(self, ws: Workspace, args: dict[str, Any]) -> ToolResult: ...


@dataclass(frozen=True)
class FunctionTool:
    """A tool made of a schema and a function: the one shape every built-in tool takes."""

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[[Workspace, dict[str, Any]], ToolResult]
    aliases: Mapping[str, str] = field(default_factory=dict)

    def run(self, ws: Workspace, args: dict[str, Any]) -> ToolResult:
        return self.fn(ws, args)


def schema(properties: dict[str, dict[str, Any]], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def refuse(message: str) -> ToolResult:
    return ToolResult(output=message, ok=False, refused=True)


def cap_text(text: str, cap: int, hint: str = "") -> str:
    """Keep the head and the tail of a long text, saying how much was cut in between."""
    if len(text) <= cap:
        return text
    head = text[: cap // 2]
    tail = text[len(text) - cap // 2 :]
    cut = len(text) - len(head) - len(tail)
    note = f"\n[... {cut} characters cut from the middle{'; ' + hint if hint else ''} ...]\n"
    return head + note + tail


def numbered(lines: list[str], first: int) -> str:
    """Lines as read shows them: the number right-aligned in 6, a tab, the text."""
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start=first))
