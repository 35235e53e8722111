from __future__ import annotations

from pathlib import Path

from stepswitch.gates.bytecode import drop_bytecode


def test_every_compiled_file_of_the_tree_goes_and_virtual_environments_stay(
    tmp_path: Path,
) -> None:
    planted = [
        tmp_path / "calc" / "__pycache__" / "ops.cpython-311.pyc",
        tmp_path / "src" / "pkg" / "sub" / "__pycache__" / "m.cpython-311.pyc",
        tmp_path / "calc" / "ops.pyc",  # beside its source: Python 2 style, still loadable
    ]
    kept = [
        tmp_path / "env" / "lib" / "__pycache__" / "site.cpython-311.pyc",
        tmp_path / ".venv" / "lib" / "__pycache__" / "x.cpython-311.pyc",
        tmp_path / "calc" / "ops.py",
    ]
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    for path in planted + kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    assert drop_bytecode(tmp_path) == 3
    assert [p for p in planted if p.exists()] == []
    assert [p for p in kept if not p.exists()] == []
    assert not (tmp_path / "calc" / "__pycache__").exists()
