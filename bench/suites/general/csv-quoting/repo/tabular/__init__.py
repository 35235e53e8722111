"""Small CSV reading and writing with named dialects."""

from tabular.dialect import EXCEL, SEMICOLON, Dialect
from tabular.reader import read_rows
from tabular.writer import format_field, format_row, write_rows

__all__ = ["EXCEL", "SEMICOLON", "Dialect", "format_field", "format_row", "read_rows", "write_rows"]
