from decimal import Decimal

import pytest

from shop.cart import Cart
from shop.catalog import UnknownProduct


def test_total_without_discount_includes_vat():
    cart = Cart()
    cart.add("TEE", 2)
    cart.add("MUG", 3)
    assert cart.subtotal() == Decimal("65.30")
    assert cart.vat() == Decimal("13.06")
    assert cart.total() == Decimal("78.36")


def test_eleven_mugs_get_ten_percent_off():
    cart = Cart()
    cart.add("MUG", 11)
    assert cart.discount() == Decimal("9.35")


def test_unknown_product_is_refused():
    with pytest.raises(UnknownProduct):
        Cart().add("HAT")


def test_quantity_must_be_positive():
    with pytest.raises(ValueError):
        Cart().add("MUG", 0)
