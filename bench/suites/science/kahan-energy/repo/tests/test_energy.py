import pytest

from energy.meter import Reading, parse_line
from energy.totals import energy_by_day, to_kwh, total_energy


def test_parse_line():
    assert parse_line("1714550400,0.25\n") == Reading(1714550400, 0.25)
    with pytest.raises(ValueError):
        parse_line("1714550400,-1")


def test_small_totals():
    readings = [Reading(0, 1.5), Reading(10, 2.5), Reading(86_400, 4.0)]
    assert total_energy(readings) == 8.0
    assert energy_by_day(readings) == {0: 4.0, 1: 4.0}


def test_kwh():
    assert to_kwh(3.6e6) == 1.0
