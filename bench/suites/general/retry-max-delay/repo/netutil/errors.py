class TransportError(Exception):
    """Base of the errors a transport raises."""


class TransientError(TransportError):
    """Worth trying again: timeouts, 502/503/504, connection resets."""


class PermanentError(TransportError):
    """Trying again cannot help: 4xx answers, malformed URLs."""
