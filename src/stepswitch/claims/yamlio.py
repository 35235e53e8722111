"""YAML for claims: libyaml's safe loader when present, a key written twice is an error (PyYAML
would keep the last one silently), and dates stay the strings they were written as."""

from __future__ import annotations

from typing import Any

import yaml

from stepswitch.errors import ConfigError

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[misc]
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                mark = key_node.start_mark
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is written twice (line {mark.line + 1})", mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]


def _as_string(loader: Any, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))


# A date or time stays text: pydantic then checks it in one place, as the file wrote it.
_Loader.add_constructor("tag:yaml.org,2002:timestamp", _as_string)


def parse_yaml(text: str, name: str) -> Any:
    try:
        return yaml.load(text, Loader=_Loader)  # a safe loader: plain data only
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(whole file)"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(name, where, f"not valid YAML: {problem}") from exc


def dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=True, allow_unicode=True, default_flow_style=False)
