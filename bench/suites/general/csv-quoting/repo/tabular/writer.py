from collections.abc import Iterable

from tabular.dialect import EXCEL, Dialect


def needs_quotes(text: str, dialect: Dialect) -> bool:
    return dialect.delimiter in text or text != text.strip()


def format_field(value: object, dialect: Dialect = EXCEL) -> str:
    text = "" if value is None else str(value)
    if needs_quotes(text, dialect):
        return f"{dialect.quote}{text}{dialect.quote}"
    return text


def format_row(values: Iterable[object], dialect: Dialect = EXCEL) -> str:
    return dialect.delimiter.join(format_field(v, dialect) for v in values) + dialect.line_end


def write_rows(rows: Iterable[Iterable[object]], dialect: Dialect = EXCEL) -> str:
    return "".join(format_row(row, dialect) for row in rows)
