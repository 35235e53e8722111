import io
import json

import pytest

from export.cli import main
from export.formats import UnknownFormat, export

ROWS = [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bob"}]


def test_csv():
    assert export(ROWS, "csv") == "id,name\n1,Ada\n2,Bob\n"


def test_tsv():
    assert export(ROWS, "tsv") == "id\tname\n1\tAda\n2\tBob\n"


def test_json():
    assert json.loads(export(ROWS, "json")) == ROWS


def test_unknown_format():
    with pytest.raises(UnknownFormat):
        export(ROWS, "xml")


def test_cli():
    out = io.StringIO()
    assert main(["--format", "tsv"], io.StringIO(json.dumps(ROWS)), out) == 0
    assert out.getvalue().startswith("id\tname\n")
