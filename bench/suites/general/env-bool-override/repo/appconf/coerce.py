def coerce(raw: str, kind: type) -> object:
    """Turn an environment string into a value of the setting's type; ValueError if it can't."""
    if kind is bool:
        return bool(raw)
    if kind is int:
        return int(raw)
    if kind is float:
        return float(raw)
    return raw
