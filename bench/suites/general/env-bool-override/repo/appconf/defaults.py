DEFAULTS: dict[str, object] = {
    "debug": False,
    "cache": True,
    "workers": 4,
    "timeout": 30.0,
    "log_level": "INFO",
}
