import itertools

from booking.intervals import Interval, merge
from booking.rooms import Room


def test_nested_booking_keeps_the_outer_one():
    room = Room("Ada")
    room.book("09:00", "17:00")
    room.book("10:00", "10:30")
    assert room.busy() == [("09:00", "17:00")]
    assert room.free_slots("08:00", "18:00") == [("08:00", "09:00"), ("17:00", "18:00")]


def test_touching_bookings_join():
    assert merge([Interval(60, 120), Interval(0, 60)]) == [Interval(0, 120)]


def test_merge_does_not_depend_on_order():
    items = [Interval(540, 1020), Interval(600, 630), Interval(1080, 1140), Interval(500, 560)]
    expected = [Interval(500, 1020), Interval(1080, 1140)]
    for order in itertools.permutations(items):
        assert merge(list(order)) == expected


def test_free_slots_never_overlap_a_booking():
    room = Room("Ada")
    for start, end in [("11:00", "12:00"), ("08:30", "16:00"), ("09:00", "09:15")]:
        room.book(start, end)
    free = room.free_slots("08:00", "18:00")
    assert free == [("08:00", "08:30"), ("16:00", "18:00")]
