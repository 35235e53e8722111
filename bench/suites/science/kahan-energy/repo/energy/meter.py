from dataclasses import dataclass


@dataclass(frozen=True)
class Reading:
    timestamp_s: int
    joules: float  # energy since the previous reading


def parse_line(line: str) -> Reading:
    """'1714550400,0.1' -> Reading(1714550400, 0.1)."""
    stamp, _, value = line.strip().partition(",")
    joules = float(value)
    if joules < 0:
        raise ValueError(f"negative increment: {line!r}")
    return Reading(int(stamp), joules)
