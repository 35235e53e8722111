from decimal import Decimal

from shop.catalog import product
from shop.discounts import RULES
from shop.tax import round_money, vat


class Cart:
    def __init__(self) -> None:
        self.lines: dict[str, int] = {}

    def add(self, sku: str, quantity: int = 1) -> None:
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        product(sku)  # unknown products fail here, not at checkout
        self.lines[sku] = self.lines.get(sku, 0) + quantity

    def subtotal(self) -> Decimal:
        return sum((product(s).price * q for s, q in self.lines.items()), Decimal("0"))

    def discount(self) -> Decimal:
        total = Decimal("0")
        for sku, quantity in self.lines.items():
            rule = RULES.get(sku)
            if rule is not None:
                total += rule.amount(product(sku).price * quantity, quantity)
        return round_money(total)

    def vat(self) -> Decimal:
        return vat(self.subtotal())

    def total(self) -> Decimal:
        return round_money(self.subtotal() - self.discount() + self.vat())
