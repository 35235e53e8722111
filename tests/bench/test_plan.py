"""The order task runs start in: contestants interleaved task by task, the order rotating."""

from __future__ import annotations

from stepswitch.bench.plan import RunKey, plan_runs


def _order(tasks: list[str], contestants: list[str], k: int = 1) -> list[tuple[str, str, int]]:
    return [(r.task, r.contestant, r.attempt) for r in plan_runs(tasks, contestants, k)]


def test_two_contestants_alternate_who_goes_first_from_task_to_task():
    assert _order(["s/t1", "s/t2", "s/t3"], ["A", "B"]) == [
        ("s/t1", "A", 0),
        ("s/t1", "B", 0),
        ("s/t2", "B", 0),
        ("s/t2", "A", 0),
        ("s/t3", "A", 0),
        ("s/t3", "B", 0),
    ]


def test_every_contestant_runs_a_task_before_the_next_task_starts():
    order = _order(["s/t1", "s/t2"], ["A", "B", "C"], k=2)
    tasks = [task for task, _, _ in order]
    assert tasks == ["s/t1"] * 3 + ["s/t2"] * 3 + ["s/t1"] * 3 + ["s/t2"] * 3
    firsts = [order[i][1] for i in range(0, len(order), 3)]
    assert firsts == ["A", "B", "C", "A"]  # rotated: each is first in turn


def test_attempts_are_the_outer_loop_and_every_run_is_planned_once():
    runs = plan_runs(["s/t1", "s/t2"], ["A", "B"], 3)
    assert [r.attempt for r in runs] == [0] * 4 + [1] * 4 + [2] * 4
    assert len(set(runs)) == len(runs) == 12


def test_a_run_key_names_its_record_folder_and_run_id():
    key = RunKey("general/csv-quoting", "oracle", 1)
    assert key.folder() == "tasks/general/csv-quoting/oracle/1"
    assert key.run_id("b7") == "b7.general.csv-quoting.oracle.1"
