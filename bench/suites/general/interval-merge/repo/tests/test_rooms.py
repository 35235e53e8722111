import pytest

from booking.intervals import Interval
from booking.rooms import Room
from booking.timeparse import to_minutes, to_text


def test_time_round_trip():
    assert to_minutes("09:30") == 570
    assert to_text(570) == "09:30"


def test_bad_time_is_refused():
    with pytest.raises(ValueError):
        to_minutes("25:00")


def test_empty_interval_is_refused():
    with pytest.raises(ValueError):
        Interval(10, 10)


def test_free_slots_around_sorted_bookings():
    room = Room("Ada")
    room.book("09:00", "10:00")
    room.book("13:00", "14:00")
    assert room.free_slots("08:00", "18:00") == [
        ("08:00", "09:00"),
        ("10:00", "13:00"),
        ("14:00", "18:00"),
    ]


def test_overlapping_bookings_merge():
    room = Room("Ada")
    room.book("09:00", "10:30")
    room.book("10:00", "11:00")
    assert room.busy() == [("09:00", "11:00")]
