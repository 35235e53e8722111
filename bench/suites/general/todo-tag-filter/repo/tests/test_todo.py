import io

from todo.cli import main
from todo.model import Item
from todo.store import TodoList


def test_parse_takes_tags_out_of_the_title():
    item = Item.parse("Buy milk #Home #errand")
    assert item.title == "Buy milk"
    assert item.tags == {"home", "errand"}


def test_pending_skips_done_items():
    todos = TodoList()
    todos.add("a")
    todos.add("b")
    todos.complete(1)
    assert [i.title for i in todos.pending()] == ["b"]


def test_cli_round_trip(tmp_path):
    path = tmp_path / "todo.json"
    main(["add", "Buy milk #home"], path)
    main(["add", "Write report #work"], path)
    main(["done", "2"], path)
    out = io.StringIO()
    main(["list"], path, out)
    assert out.getvalue() == "  1. Buy milk  #home\n"
