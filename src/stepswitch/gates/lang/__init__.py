"""Test suites in other languages than Python: one module per runner (`node.py` for node's own
`--test`, Jest, Vitest and Mocha; `cargo.py`, `go.py`, `make.py`), each detecting its gates from
the files the base commit declares and reading its runner's report into the failing tests.
`base.py` is the contract they share; `registry.py` finds a runner by its name."""
