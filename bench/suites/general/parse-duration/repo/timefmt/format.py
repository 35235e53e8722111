from timefmt.units import ORDER, SECONDS_PER


def format_duration(seconds: int) -> str:
    """5400 -> '1h 30m'; 0 -> '0s'."""
    if seconds < 0:
        raise ValueError("a duration cannot be negative")
    parts = []
    rest = int(seconds)
    for unit in ORDER:
        count, rest = divmod(rest, SECONDS_PER[unit])
        if count:
            parts.append(f"{count}{unit}")
    return " ".join(parts) or "0s"
