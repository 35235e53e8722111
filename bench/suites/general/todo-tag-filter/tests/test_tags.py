import io

from todo.cli import main
from todo.store import TodoList

LINES = [
    "Buy milk #home #errand",
    "Fix bike #home",
    "Send invoice #work",
    "Post parcel #errand #Home",
]


def sample():
    todos = TodoList()
    for line in LINES:
        todos.add(line)
    return todos


def test_with_tags_filters_pending_items_in_order():
    todos = sample()
    assert [i.title for i in todos.with_tags("home")] == ["Buy milk", "Fix bike", "Post parcel"]


def test_with_several_tags_needs_all_of_them():
    assert [i.title for i in sample().with_tags("home", "errand")] == ["Buy milk", "Post parcel"]


def test_with_tags_ignores_case_and_hash():
    assert [i.title for i in sample().with_tags("#HOME", "Errand")] == ["Buy milk", "Post parcel"]


def test_with_tags_skips_done_items():
    todos = sample()
    todos.complete(1)
    assert [i.title for i in todos.with_tags("errand")] == ["Post parcel"]


def run(path, *argv):
    out = io.StringIO()
    assert main(list(argv), path, out) == 0
    return out.getvalue()


def test_cli_list_by_tag_keeps_item_numbers(tmp_path):
    path = tmp_path / "todo.json"
    for line in LINES:
        run(path, "add", line)
    assert run(path, "list", "--tag", "work") == "  3. Send invoice  #work\n"
    assert run(path, "list", "--tag", "#home", "--tag", "errand") == (
        "  1. Buy milk  #errand #home\n  4. Post parcel  #errand #home\n"
    )


def test_cli_list_without_tag_is_unchanged(tmp_path):
    path = tmp_path / "todo.json"
    run(path, "add", "a #x")
    run(path, "add", "b")
    assert run(path, "list") == "  1. a  #x\n  2. b\n"
