from booking.intervals import Interval, gaps, merge
from booking.timeparse import to_minutes, to_text


class Room:
    def __init__(self, name: str) -> None:
        self.name = name
        self.bookings: list[Interval] = []

    def book(self, start: str, end: str) -> None:
        self.bookings.append(Interval(to_minutes(start), to_minutes(end)))

    def busy(self) -> list[tuple[str, str]]:
        return [(to_text(i.start), to_text(i.end)) for i in merge(self.bookings)]

    def free_slots(self, day_start: str, day_end: str) -> list[tuple[str, str]]:
        free = gaps(merge(self.bookings), to_minutes(day_start), to_minutes(day_end))
        return [(to_text(i.start), to_text(i.end)) for i in free]
