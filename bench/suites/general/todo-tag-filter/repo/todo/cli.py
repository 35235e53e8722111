import argparse
import sys
from pathlib import Path
from typing import TextIO

from todo.model import Item
from todo.store import TodoList


def _line(number: int, item: Item) -> str:
    tags = " ".join(f"#{t}" for t in sorted(item.tags))
    return f"{number:>3}. {item.title}" + (f"  {tags}" if tags else "")


def main(argv: list[str], path: Path, out: TextIO = sys.stdout) -> int:
    parser = argparse.ArgumentParser(prog="todo")
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add")
    add.add_argument("line")
    done = commands.add_parser("done")
    done.add_argument("number", type=int)
    commands.add_parser("list")
    args = parser.parse_args(argv)

    todos = TodoList.load(path)
    if args.command == "add":
        todos.add(args.line)
    elif args.command == "done":
        todos.complete(args.number)
    else:
        for number, item in enumerate(todos.items, start=1):
            if not item.done:
                print(_line(number, item), file=out)
    todos.save(path)
    return 0
