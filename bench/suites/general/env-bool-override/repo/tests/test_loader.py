import pytest

from appconf import ConfigValueError, load


def test_defaults_without_environment():
    assert load({}) == {
        "debug": False,
        "cache": True,
        "workers": 4,
        "timeout": 30.0,
        "log_level": "INFO",
    }


def test_environment_overrides_the_file():
    settings = load({"APP_WORKERS": "8"}, {"workers": 2, "log_level": "DEBUG"})
    assert settings["workers"] == 8
    assert settings["log_level"] == "DEBUG"


def test_numbers_are_parsed():
    assert load({"APP_TIMEOUT": "2.5"})["timeout"] == 2.5


def test_bad_number_names_the_variable():
    with pytest.raises(ConfigValueError, match="APP_WORKERS"):
        load({"APP_WORKERS": "many"})


def test_debug_can_be_turned_on():
    assert load({"APP_DEBUG": "true"})["debug"] is True


def test_unknown_file_key_is_refused():
    with pytest.raises(ConfigValueError):
        load({}, {"colour": "blue"})
