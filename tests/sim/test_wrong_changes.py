"""The wrong changes a simulated edit makes when it misses are plausible and never the reference:
a slip in one line the reference adds, part of a reference that spans files, or an edit whose
old text the file does not hold."""

from __future__ import annotations

import random

from stepswitch.sim.reference import TaskReference
from stepswitch.sim.wrong import mutated_reference, partial_reference, stale_edit, wrong_change

REF = TaskReference(
    "general/two",
    {
        "a.py": "def top(xs):\n    return xs[:3] if len(xs) >= 3 else xs\n",
        "b.py": "from a import top\n\nDEFAULT = True\n",
    },
    {"a.py": "def top(xs):\n    return xs[:2]\n", "b.py": None},
)


def test_a_mutation_writes_every_file_with_one_line_slipped():
    for seed in range(20):
        calls = mutated_reference(REF, random.Random(seed))
        assert calls is not None
        written = {args["path"]: args["content"] for name, args in calls}
        assert set(written) == set(REF.after) and written != REF.after
        slipped = [
            (old, new)
            for path in REF.paths
            for old, new in zip(
                REF.after[path].splitlines(), written[path].splitlines(), strict=True
            )
            if old != new
        ]
        assert len(slipped) == 1


def test_a_partial_change_writes_some_of_the_files_and_a_one_file_reference_has_none():
    calls = partial_reference(REF, random.Random(1))
    assert calls is not None and len(calls) == 1 and calls[0][1]["path"] in REF.after
    one = TaskReference("general/one", {"a.py": REF.after["a.py"]}, {"a.py": REF.before["a.py"]})
    assert partial_reference(one, random.Random(1)) is None


def test_a_stale_edit_names_old_text_the_file_does_not_hold():
    [(name, args)] = stale_edit(REF, random.Random(2))
    held = (REF.before.get(args["path"]) or "") + REF.after[args["path"]]
    assert name == "edit" and args["old"] not in held


def test_every_kind_of_wrong_change_turns_up_across_seeds():
    kinds = {wrong_change(REF, random.Random(seed))[0] for seed in range(30)}
    assert kinds == {"mutation", "partial", "stale"}
