from decimal import Decimal

from shop.cart import Cart


def cart_of(**lines):
    cart = Cart()
    for sku, quantity in lines.items():
        cart.add(sku, quantity)
    return cart


def test_exactly_ten_mugs_are_discounted():
    assert cart_of(MUG=10).discount() == Decimal("8.50")


def test_nine_mugs_are_not_discounted():
    assert cart_of(MUG=9).discount() == Decimal("0.00")


def test_vat_is_charged_on_the_discounted_amount():
    cart = cart_of(MUG=10)
    assert cart.vat() == Decimal("15.30")
    assert cart.total() == Decimal("91.80")


def test_mixed_cart_with_two_discounts():
    cart = cart_of(MUG=12, PEN=50, TEE=1)
    # mugs 102.00 - 10.20, pens 60.00 - 12.00, tee 19.90
    assert cart.discount() == Decimal("22.20")
    assert cart.vat() == Decimal("31.94")
    assert cart.total() == Decimal("191.64")


def test_cart_without_discount_is_unchanged():
    cart = cart_of(TEE=2, MUG=3)
    assert cart.total() == Decimal("78.36")
