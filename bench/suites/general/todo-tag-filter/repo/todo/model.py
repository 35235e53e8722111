import re
from dataclasses import dataclass, field

_TAG = re.compile(r"#(\w+)")


@dataclass
class Item:
    title: str
    done: bool = False
    tags: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def parse(cls, line: str) -> "Item":
        tags = frozenset(t.lower() for t in _TAG.findall(line))
        title = " ".join(_TAG.sub("", line).split())
        return cls(title, False, tags)

    def to_json(self) -> dict[str, object]:
        return {"title": self.title, "done": self.done, "tags": sorted(self.tags)}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> "Item":
        tags = data.get("tags", [])
        assert isinstance(tags, list)
        return cls(str(data["title"]), bool(data["done"]), frozenset(tags))
