import json
from collections.abc import Mapping
from typing import Any

Record = Mapping[str, Any]


class UnknownFormat(ValueError):
    pass


def _delimited(records: list[Record], sep: str) -> str:
    if not records:
        return ""
    keys = list(records[0])
    rows = [sep.join(keys)] + [sep.join(str(r[k]) for k in keys) for r in records]
    return "\n".join(rows) + "\n"


def export(records: list[Record], fmt: str) -> str:
    if fmt == "csv":
        return _delimited(records, ",")
    elif fmt == "tsv":
        return _delimited(records, "\t")
    elif fmt == "json":
        return json.dumps(list(records), indent=2, sort_keys=True) + "\n"
    else:
        raise UnknownFormat(f"unknown format {fmt!r}")
