"""The one test harness (ADR 0043 for the forked CLI runner): what the tests share to drive ssw.

- `tests.harness.cli`: `ssw ARGS` as a user runs it (`run_ssw_cli`, a child forked by
  tests/ssw_zygote.py; `fresh=True` for what must be a real `python -m stepswitch`), the
  environment a run is given (`ssw_env`), other processes (`run_process`) and `wait_for`.
- `tests.harness.repo`: git repositories in a temporary folder: `write_repo` from a dict of files
  (committed with `commit=True`), `sample_repo` from tests/fixtures/repos, and `git`.
- `tests.harness.task`: a scripted task end to end: replies (`tool`, `done`, `explore`, ...),
  policies (`make_policy`), and `run_ssw`, one full `ssw run` and what it left behind.
"""
