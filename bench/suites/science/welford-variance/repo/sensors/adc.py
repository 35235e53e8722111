from sensors.constants import FULL_SCALE, VREF


def counts_to_volts(counts: float) -> float:
    if not 0 <= counts <= FULL_SCALE:
        raise ValueError(f"reading out of range: {counts}")
    return counts * VREF / FULL_SCALE
