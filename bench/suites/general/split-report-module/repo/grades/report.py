import csv
import io
import math


def mean(values: list[float]) -> float:
    if not values:
        raise ValueError("mean of no values")
    return sum(values) / len(values)


def median(values: list[float]) -> float:
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def stdev(values: list[float]) -> float:
    """Sample standard deviation."""
    if len(values) < 2:
        raise ValueError("stdev needs at least two values")
    m = mean(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def letter_grade(score: float) -> str:
    if not 0 <= score <= 100:
        raise ValueError(f"score out of range: {score}")
    if score >= 90:
        return "A"
    if score >= 80:
        return "B"
    if score >= 70:
        return "C"
    if score >= 60:
        return "D"
    return "F"


def load_scores(text: str) -> dict[str, float]:
    """CSV with a header `student,score`."""
    return {row["student"]: float(row["score"]) for row in csv.DictReader(io.StringIO(text))}


def render_report(scores: dict[str, float]) -> str:
    lines = [f"{name:<10} {score:6.1f}  {letter_grade(score)}" for name, score in sorted(scores.items())]
    values = list(scores.values())
    lines.append("-" * 20)
    lines.append(f"{'mean':<10} {mean(values):6.1f}")
    lines.append(f"{'median':<10} {median(values):6.1f}")
    if len(values) > 1:
        lines.append(f"{'stdev':<10} {stdev(values):6.1f}")
    return "\n".join(lines) + "\n"
