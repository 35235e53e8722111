import pytest

from appconf import ConfigValueError, load


@pytest.mark.parametrize("raw", ["false", "False", "FALSE", "no", "off", "0", "No"])
def test_false_spellings(raw):
    assert load({"APP_DEBUG": raw, "APP_CACHE": raw}) == {
        **load({}),
        "debug": False,
        "cache": False,
    }


@pytest.mark.parametrize("raw", ["true", "True", "yes", "on", "1", "ON"])
def test_true_spellings(raw):
    assert load({"APP_DEBUG": raw})["debug"] is True


@pytest.mark.parametrize("raw", ["maybe", "", "2", "tru"])
def test_other_values_are_refused_with_the_variable_name(raw):
    with pytest.raises(ConfigValueError, match="APP_CACHE"):
        load({"APP_CACHE": raw})


def test_booleans_from_the_file_are_kept():
    assert load({}, {"debug": True})["debug"] is True
