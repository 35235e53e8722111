from __future__ import annotations

from pathlib import Path

from stepswitch.gates.bytecode import drop_bytecode


def test_every_compiled_file_of_the_tree_goes_but_the_gates_own_environments(
    tmp_path: Path,
) -> None:
    planted = [
        tmp_path / "calc" / "__pycache__" / "ops.cpython-311.pyc",
        tmp_path / "src" / "pkg" / "sub" / "__pycache__" / "m.cpython-311.pyc",
        tmp_path / "calc" / "ops.pyc",  # beside its source: Python 2 style, still loadable
        # A pyvenv.cfg the agent wrote beside a package makes it no environment (issue 21).
        tmp_path / "textstats" / "__pycache__" / "stats.cpython-311.pyc",
        tmp_path / "node_modules" / "__pycache__" / "x.cpython-311.pyc",
    ]
    kept = [
        tmp_path / ".venv" / "lib" / "__pycache__" / "site.cpython-311.pyc",
        tmp_path / "calc" / "ops.py",
    ]
    (tmp_path / "textstats").mkdir()
    (tmp_path / "textstats" / "pyvenv.cfg").write_text("")
    for path in planted + kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")

    assert drop_bytecode(tmp_path, keep=tmp_path / ".venv") == 5

    assert [p for p in planted if p.exists()] == []
    assert [p for p in kept if not p.exists()] == []
    assert not (tmp_path / "calc" / "__pycache__").exists()
