from tabular.dialect import EXCEL, Dialect


def read_rows(text: str, dialect: Dialect = EXCEL) -> list[list[str]]:
    """Parse CSV text: quoted fields may hold delimiters, doubled quotes and line breaks."""
    rows: list[list[str]] = []
    row: list[str] = []
    field: list[str] = []
    quoted = False
    i = 0
    while i < len(text):
        ch = text[i]
        if quoted:
            if ch == dialect.quote and text[i + 1 : i + 2] == dialect.quote:
                field.append(ch)
                i += 1
            elif ch == dialect.quote:
                quoted = False
            else:
                field.append(ch)
        elif ch == dialect.quote and not field:
            quoted = True
        elif ch == dialect.delimiter:
            row.append("".join(field))
            field = []
        elif ch in "\r\n":
            if ch == "\r" and text[i + 1 : i + 2] == "\n":
                i += 1
            row.append("".join(field))
            rows.append(row)
            row, field = [], []
        else:
            field.append(ch)
        i += 1
    if field or row:
        row.append("".join(field))
        rows.append(row)
    return rows
