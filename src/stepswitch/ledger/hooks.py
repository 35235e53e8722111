"""Wire one provider call to the ledger through the client's per-attempt hooks."""

from __future__ import annotations

from dataclasses import replace
from types import TracebackType

from stepswitch.ledger.admission import CallIntent, Reservation
from stepswitch.ledger.book import Ledger
from stepswitch.ledger.store import CallRow
from stepswitch.wire.types import Attempt, CallHooks


class CallTracker:
    """Reserve before each attempt, settle after it; `rows` holds every attempt's row.

        with CallTracker(ledger, intent) as tracker:
            completion = provider.complete(request, deadline=d, hooks=tracker.hooks)
        if stop_reason(tracker.rows): ...  # billed above its reservation: stop the run (ADR 0013)
        if any(ledger.lost_usage(row) for row in tracker.rows): ...  # fail closed by default

    Leaving the block with a reservation still open (an exception between the hooks) settles
    it as a bound, so no attempt that may have left the machine goes unrecorded.
    """

    def __init__(self, ledger: Ledger, intent: CallIntent) -> None:
        self.ledger = ledger
        self.intent = intent
        self.rows: list[CallRow] = []
        self._open: Reservation | None = None

    @property
    def hooks(self) -> CallHooks:
        return CallHooks(before_attempt=self._before, after_attempt=self._after)

    @property
    def lost_usage(self) -> bool:
        return any(self.ledger.lost_usage(row) for row in self.rows)

    def lower_cap(self, max_output_tokens: int) -> None:
        """Reserve the next attempts with a lower output cap (the caller resends with it)."""
        self.intent = replace(self.intent, max_output_tokens=max_output_tokens)

    def _before(self, number: int, body_bytes: int) -> None:
        self.close("the attempt ended without a report")
        self._open = self.ledger.reserve(self.intent, number, body_bytes)

    def _after(self, attempt: Attempt) -> None:
        if self._open is None:
            return  # an attempt the ledger never admitted cannot have been sent
        reservation, self._open = self._open, None
        self.rows.append(self.ledger.settle(reservation, attempt))

    def close(self, error: str) -> CallRow | None:
        """Settle a still-open reservation as a bound; None when nothing was open."""
        if self._open is None:
            return None
        reservation, self._open = self._open, None
        row = self.ledger.settle_lost(reservation, error)
        self.rows.append(row)
        return row

    def __enter__(self) -> CallTracker:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close(f"the call raised {kind.__name__}: {exc}" if kind else "the call ended early")
