from collections.abc import Mapping

from appconf.coerce import coerce
from appconf.defaults import DEFAULTS

PREFIX = "APP_"


class ConfigValueError(ValueError):
    pass


def load(
    env: Mapping[str, str], file_values: Mapping[str, object] | None = None
) -> dict[str, object]:
    settings = dict(DEFAULTS)
    for key, value in (file_values or {}).items():
        if key not in DEFAULTS:
            raise ConfigValueError(f"unknown setting {key!r} in the settings file")
        settings[key] = value
    for key, default in DEFAULTS.items():
        name = PREFIX + key.upper()
        if name in env:
            try:
                settings[key] = coerce(env[name], type(default))
            except ValueError as exc:
                raise ConfigValueError(f"{name}={env[name]!r}: {exc}") from None
    return settings
