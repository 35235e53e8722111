from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class BulkDiscount:
    """`percent` off a line when at least `min_quantity` units are bought."""

    min_quantity: int
    percent: Decimal

    def amount(self, line_total: Decimal, quantity: int) -> Decimal:
        if quantity > self.min_quantity:
            return line_total * self.percent / 100
        return Decimal("0")


RULES = {
    "MUG": BulkDiscount(10, Decimal("10")),
    "PEN": BulkDiscount(50, Decimal("20")),
}
