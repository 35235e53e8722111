from dataclasses import dataclass
from decimal import Decimal


class UnknownProduct(KeyError):
    pass


@dataclass(frozen=True)
class Product:
    sku: str
    name: str
    price: Decimal


CATALOG = {
    p.sku: p
    for p in (
        Product("MUG", "Mug", Decimal("8.50")),
        Product("TEE", "T-shirt", Decimal("19.90")),
        Product("PEN", "Pen", Decimal("1.20")),
    )
}


def product(sku: str) -> Product:
    try:
        return CATALOG[sku]
    except KeyError:
        raise UnknownProduct(sku) from None
