import pytest

from listing.api import list_endpoint
from listing.paginate import PageOutOfRange, paginate

ORDERS = [{"id": i} for i in range(1, 26)]


def test_partial_last_page_exists():
    page = paginate(list(range(25)), 3, 10)
    assert page.items == [20, 21, 22, 23, 24]
    assert page.pages == 3
    assert not page.has_next


def test_every_item_is_on_exactly_one_page():
    for total in range(0, 31):
        items = list(range(total))
        first = paginate(items, 1, 7)
        seen = []
        for number in range(1, first.pages + 1):
            seen += paginate(items, number, 7).items
        assert seen == items


def test_empty_result_is_one_empty_page():
    page = paginate([], 1, 10)
    assert (page.items, page.pages, page.has_next) == ([], 1, False)


def test_page_past_the_end_is_out_of_range():
    with pytest.raises(PageOutOfRange):
        paginate(list(range(25)), 4, 10)


def test_endpoint_reports_the_last_page():
    answer = list_endpoint(ORDERS, {"per_page": "10", "page": "2"})
    assert answer["pages"] == 3
    assert answer["has_next"] is True
    last = list_endpoint(ORDERS, {"per_page": "10", "page": "3"})
    assert [o["id"] for o in last["items"]] == [21, 22, 23, 24, 25]
