from collections.abc import Mapping
from typing import Any

Record = Mapping[str, Any]


def filter_records(records: list[Record], **equals: Any) -> list[Record]:
    return [r for r in records if all(r.get(k) == v for k, v in equals.items())]


def sort_records(records: list[Record], key: str, descending: bool = False) -> list[Record]:
    return sorted(records, key=lambda r: r[key], reverse=descending)
