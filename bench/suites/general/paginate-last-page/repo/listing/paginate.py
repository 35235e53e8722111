from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


class PageOutOfRange(ValueError):
    pass


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    number: int
    pages: int

    @property
    def has_next(self) -> bool:
        return self.number < self.pages

    @property
    def has_previous(self) -> bool:
        return self.number > 1


def page_count(total: int, per_page: int) -> int:
    return max(1, total // per_page)


def paginate(items: list[T], number: int, per_page: int = 20) -> Page[T]:
    if per_page < 1:
        raise ValueError("per_page must be at least 1")
    pages = page_count(len(items), per_page)
    if not 1 <= number <= pages:
        raise PageOutOfRange(f"page {number} of {pages}")
    start = (number - 1) * per_page
    return Page(items[start : start + per_page], number, pages)
