from dataclasses import dataclass


@dataclass(frozen=True)
class Dialect:
    delimiter: str = ","
    quote: str = '"'
    line_end: str = "\r\n"


EXCEL = Dialect()
SEMICOLON = Dialect(delimiter=";")
