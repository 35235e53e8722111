import csv
import io

import pytest

from tabular import EXCEL, SEMICOLON, format_field, read_rows, write_rows

TRICKY = [
    ["n-17", 'She said "ship it"', "line one\nline two"],
    ['"', '""', "a\r\nb", "tab\there", ""],
    ["ends with quote\"", "\"starts", "plain"],
]


@pytest.mark.parametrize("dialect", [EXCEL, SEMICOLON])
def test_tricky_rows_round_trip(dialect):
    assert read_rows(write_rows(TRICKY, dialect), dialect) == TRICKY


def test_python_csv_module_reads_what_we_write():
    text = write_rows(TRICKY)
    assert list(csv.reader(io.StringIO(text, newline=""))) == TRICKY


def test_embedded_quotes_are_doubled():
    assert format_field('a"b') == '"a""b"'


def test_line_break_is_quoted():
    assert format_field("x\ny") == '"x\ny"'


def test_plain_fields_stay_unquoted():
    assert format_field("plain text") == "plain text"
    assert format_field(42) == "42"
