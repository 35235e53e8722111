from decimal import ROUND_HALF_UP, Decimal

VAT_RATE = Decimal("0.20")
CENT = Decimal("0.01")


def round_money(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def vat(amount: Decimal) -> Decimal:
    return round_money(amount * VAT_RATE)
