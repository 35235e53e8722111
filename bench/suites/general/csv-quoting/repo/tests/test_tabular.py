from tabular import SEMICOLON, format_row, read_rows, write_rows


def test_plain_fields_are_not_quoted():
    assert format_row(["a", 1, None]) == "a,1,\r\n"


def test_field_with_delimiter_is_quoted():
    assert format_row(["a,b", "c"]) == '"a,b",c\r\n'


def test_semicolon_dialect_quotes_semicolons_only():
    assert format_row(["a;b", "c,d"], SEMICOLON) == '"a;b";c,d\r\n'


def test_reader_reads_quoted_fields():
    assert read_rows('x,"y ""z""",\r\n1,2,3\r\n') == [["x", 'y "z"', ""], ["1", "2", "3"]]


def test_plain_rows_round_trip():
    rows = [["id", "name"], ["1", "Ada"], ["2", "Grace, R."]]
    assert read_rows(write_rows(rows)) == rows
