import json
from pathlib import Path

from todo.model import Item


class TodoList:
    def __init__(self, items: list[Item] | None = None) -> None:
        self.items = items or []

    def add(self, line: str) -> Item:
        item = Item.parse(line)
        self.items.append(item)
        return item

    def complete(self, number: int) -> Item:
        item = self.items[number - 1]
        item.done = True
        return item

    def pending(self) -> list[Item]:
        return [i for i in self.items if not i.done]

    @classmethod
    def load(cls, path: Path) -> "TodoList":
        if not path.exists():
            return cls()
        return cls([Item.from_json(d) for d in json.loads(path.read_text())])

    def save(self, path: Path) -> None:
        path.write_text(json.dumps([i.to_json() for i in self.items], indent=1))
