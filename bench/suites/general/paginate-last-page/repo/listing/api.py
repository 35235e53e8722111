from typing import Any

from listing.paginate import paginate
from listing.query import Record, filter_records, sort_records


def list_endpoint(records: list[Record], params: dict[str, str]) -> dict[str, Any]:
    """What GET /orders answers: one page of the filtered, sorted records."""
    wanted = {k: v for k, v in params.items() if k not in ("page", "per_page", "sort")}
    chosen = filter_records(records, **wanted)
    if "sort" in params:
        field = params["sort"]
        chosen = sort_records(chosen, field.lstrip("-"), descending=field.startswith("-"))
    page = paginate(chosen, int(params.get("page", 1)), int(params.get("per_page", 20)))
    return {
        "items": page.items,
        "page": page.number,
        "pages": page.pages,
        "has_next": page.has_next,
        "has_previous": page.has_previous,
    }
