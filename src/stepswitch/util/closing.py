"""ClosesOnExit: `with` for a class that has a close(); the block's end closes it."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class ClosesOnExit:
    """Mixed into a class that defines close(): `with obj:` gives obj and closes it after."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
