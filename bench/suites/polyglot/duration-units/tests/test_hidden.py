"""The hidden tests are node's own (the `*.test.js` files beside this one), each file run by
node's test runner in the checkout: one pytest test per file, its output's tail on failure."""

import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FILES = sorted(HERE.glob("*.test.js"))


@pytest.mark.parametrize("file", FILES, ids=lambda file: file.name)
def test_node(file: Path) -> None:
    run = subprocess.run(
        ["node", "--test", str(file)],
        cwd=HERE.parent,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
