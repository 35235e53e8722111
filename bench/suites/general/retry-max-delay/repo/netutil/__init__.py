"""HTTP-ish helpers: errors, a retry loop and a JSON client over a pluggable transport."""

from netutil.errors import PermanentError, TransientError
from netutil.retry import retry

__all__ = ["PermanentError", "TransientError", "retry"]
