import pytest

from listing.api import list_endpoint
from listing.paginate import PageOutOfRange, paginate

ORDERS = [{"id": i, "status": "open" if i % 2 else "shipped"} for i in range(1, 21)]


def test_first_page():
    page = paginate(list(range(20)), 1, 10)
    assert page.items == list(range(10))
    assert page.has_next and not page.has_previous


def test_exact_multiple_has_no_extra_page():
    assert paginate(list(range(20)), 2, 10).pages == 2


def test_page_zero_is_out_of_range():
    with pytest.raises(PageOutOfRange):
        paginate([1, 2, 3], 0, 10)


def test_endpoint_filters_and_sorts():
    answer = list_endpoint(ORDERS, {"status": "open", "sort": "-id", "per_page": "5"})
    assert [o["id"] for o in answer["items"]] == [19, 17, 15, 13, 11]
    assert answer["pages"] == 2
