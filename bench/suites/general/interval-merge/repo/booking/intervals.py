from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Interval:
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.end <= self.start:
            raise ValueError(f"empty interval {self.start}-{self.end}")

    def overlaps(self, other: "Interval") -> bool:
        return self.start < other.end and other.start < self.end


def merge(intervals: list[Interval]) -> list[Interval]:
    """Overlapping or touching intervals joined into one; the result is sorted."""
    merged: list[Interval] = []
    for item in sorted(intervals, key=lambda i: i.end):
        if merged and item.start <= merged[-1].end:
            last = merged.pop()
            merged.append(Interval(last.start, max(last.end, item.end)))
        else:
            merged.append(item)
    return merged


def gaps(busy: list[Interval], start: int, end: int) -> list[Interval]:
    """The parts of [start, end) not covered by `busy` (which must be merged)."""
    free: list[Interval] = []
    cursor = start
    for item in busy:
        if item.start > cursor:
            free.append(Interval(cursor, min(item.start, end)))
        cursor = max(cursor, item.end)
        if cursor >= end:
            break
    if cursor < end:
        free.append(Interval(cursor, end))
    return free
