from __future__ import annotations

from stepswitch.gates.protected import (
    check_constants,
    constant_bindings,
    matches_protected,
    protected_verdict,
)

BASE = """\
G = 6.674e-11
C: float = 299_792_458.0
A, B = 1, 2
LABEL = "si"


class Units:
    EV = 1.602e-19


def helper():
    G = 1  # a local name, not the constant
    return G
"""


def test_an_unchanged_constant_passes_even_when_reformatted() -> None:
    new = BASE.replace("6.674e-11", "6.674E-11").replace("299_792_458.0", "299792458.0")
    assert check_constants("consts.py", BASE, new, ["G", "C"]) == []


def test_a_changed_constant_fails_naming_it_the_file_and_old_to_new() -> None:
    new = BASE.replace("G = 6.674e-11", "G = 6.67e-11")
    assert check_constants("src/consts.py", BASE, new, ["G", "C"]) == [
        "src/consts.py: protected constant G changed: 6.674e-11 -> 6.67e-11"
    ]


def test_a_removed_constant_fails_naming_its_old_value() -> None:
    new = BASE.replace('LABEL = "si"\n', "")
    assert check_constants("consts.py", BASE, new, ["LABEL"]) == [
        "consts.py: protected constant LABEL removed (was 'si')"
    ]


def test_a_later_reassignment_or_augmented_assignment_counts_as_a_change() -> None:
    problems = check_constants("consts.py", BASE, BASE + "\nG *= 2\n", ["G"])
    assert problems == ["consts.py: protected constant G changed: 6.674e-11 -> 6.674e-11; Mult 2"]


def test_star_protects_every_upper_case_name_at_module_level() -> None:
    new = BASE.replace("A, B = 1, 2", "A, B = 1, 3")
    assert check_constants("consts.py", BASE, new, ["*"]) == [
        "consts.py: protected constant B changed: 2 -> 3"
    ]


def test_class_constants_are_named_with_their_class() -> None:
    new = BASE.replace("EV = 1.602e-19", "EV = 1.6e-19")
    assert check_constants("consts.py", BASE, new, ["Units.EV"]) == [
        "consts.py: protected constant Units.EV changed: 1.602e-19 -> 1.6e-19"
    ]


def test_local_names_in_functions_are_not_constants() -> None:
    assert [b for b, _ in constant_bindings(BASE)["G"]] != []
    assert len(constant_bindings(BASE)["G"]) == 1


def test_a_name_missing_at_the_base_commit_is_a_failure_saying_to_check_the_config() -> None:
    problems = check_constants("consts.py", BASE, BASE, ["H_BAR"])
    assert problems == [
        "consts.py: H_BAR is not assigned at the top level at the base commit; "
        "check the gate's `constants`"
    ]


def test_a_deleted_file_removes_each_protected_constant() -> None:
    assert check_constants("consts.py", BASE, None, ["G"]) == [
        "consts.py: deleted, removing protected constant G (was 6.674e-11)"
    ]


def test_a_file_that_no_longer_parses_fails_without_raising() -> None:
    (problem,) = check_constants("consts.py", BASE, "G = (", ["G"])
    assert problem.startswith("consts.py: does not parse (line 1")


def test_a_protected_pattern_covers_what_is_below_a_folder_it_names() -> None:
    patterns = ["data/reference", "*.json"]
    assert matches_protected("data/reference/table.csv", patterns) == "data/reference"
    assert matches_protected("golden.json", patterns) == "*.json"
    assert matches_protected("src/golden.json", patterns) is None  # `*` stays in one folder
    assert matches_protected("src/model.py", patterns) is None


def test_the_verdict_passes_only_without_problems() -> None:
    assert protected_verdict("constants", [], 0.0).passed
    failed = protected_verdict("constants", ["consts.py: protected constant G changed"], 0.0)
    assert not failed.passed
    assert "consts.py: protected constant G changed" in failed.report
