"""The hidden tests are Go's own (the `*_test.go` files beside this one), each file run by
`go test` in a copy of the checkout with that file added, its build cache in pytest's temporary
folder (never the checkout or HOME), nothing fetched: one pytest test per file, run on that
file's tests only, its output's tail on failure."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FILES = sorted(HERE.glob("*_test.go"))


@pytest.mark.parametrize("file", FILES, ids=lambda file: file.name)
def test_go(file: Path, tmp_path: Path) -> None:
    work = tmp_path / "module"
    shutil.copytree(HERE.parent, work, ignore=shutil.ignore_patterns(".git", HERE.name))
    shutil.copy(file, work / file.name)
    names = re.findall(r"^func (Test\w+)\(", file.read_text(), flags=re.M)
    env = {
        **os.environ,
        "GOCACHE": str(tmp_path / "cache"),
        "GOPATH": str(tmp_path / "gopath"),
        "GOPROXY": "off",
        "GOFLAGS": "-mod=mod",
        "GOTOOLCHAIN": "local",
    }
    run = subprocess.run(
        ["go", "test", "-count=1", "-run", f"^({'|'.join(names)})$", "."],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
