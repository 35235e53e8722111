import json
from collections.abc import Callable
from typing import Any

from netutil.errors import PermanentError, TransientError
from netutil.retry import retry

Transport = Callable[[str], tuple[int, str]]  # url -> (status, body)


def fetch_json(transport: Transport, url: str, **retry_args: Any) -> Any:
    def once() -> Any:
        status, body = transport(url)
        if status in (502, 503, 504):
            raise TransientError(f"{url}: {status}")
        if status >= 400:
            raise PermanentError(f"{url}: {status}")
        return json.loads(body)

    return retry(once, **retry_args)
