def to_minutes(text: str) -> int:
    """'09:30' -> 570."""
    hours, _, minutes = text.partition(":")
    value = int(hours) * 60 + int(minutes or 0)
    if not 0 <= value <= 24 * 60:
        raise ValueError(f"not a time of day: {text!r}")
    return value


def to_text(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"
