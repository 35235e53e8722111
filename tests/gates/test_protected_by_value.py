"""A protected constant is the value the code imports (ADR 0022): a change that makes Python import
something else under the protected module's name, or rebinds the value when the package is
imported, fails the protected gate, though the protected file itself is untouched. Each case is a
real git repository changed as the agent's `run` tool could change it, and each forgery has a
control: the repository's own tests, run by pytest as the tests gate runs them, see the forged
value (or, for what Python does not import, the real one)."""

from __future__ import annotations

import importlib.machinery
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from stepswitch.errors import UsageError
from stepswitch.gates.config import GateConfig, ProtectedGate
from stepswitch.gates.interpreter import Interpreter
from stepswitch.gates.runner import GateResult
from stepswitch.gates.suite import GateSuite
from stepswitch.util.sandbox import Confinement, child_env, choose_sandbox, policy_for_worktree
from tests.harness.cli import run_pytest
from tests.harness.repo import write_repo

PYTHON = Interpreter(Path(sys.executable), "the tests' own")
PACKAGE = Path(__file__).resolve().parents[2] / "src" / "stepswitch"
CONSTANTS = "textstats/constants.py"
STATS = "textstats/stats.py"

FILES = {
    "pyproject.toml": '[project]\nname = "textstats"\nversion = "0.1.0"\n',
    "textstats/__init__.py": "",
    CONSTANTS: "G = 6.674e-11\nMIN_WORD = 3\n",
    STATS: """
        from textstats.constants import MIN_WORD

        LIMIT = 10


        def long_words(words):
            return [w for w in words if len(w) >= MIN_WORD][:LIMIT]
    """,
    "tests/test_values.py": """
        from textstats.constants import G
        from textstats.stats import LIMIT


        def test_g_is_newtons_constant():
            assert G == 6.674e-11


        def test_the_limit_is_ten():
            assert LIMIT == 10
    """,
}
G_FORGED = "assert 7e-11 == 6.674e-11"  # what pytest says when a test sees the forged G
G_FAILED = "FAILED tests/test_values.py::test_g_is_newtons_constant"
GATE = ProtectedGate(
    name="constants", kind="protected", constants={CONSTANTS: ("G",), STATS: ("LIMIT",)}
)


def change(root: Path, files: dict[str, str]) -> None:
    """Write `files` into the worktree, uncommitted, as a command of the agent would."""
    write_repo(root, files)


def compiled(root: Path, rel: str, source: str) -> None:
    """Bytecode of `source` at `rel`, with no source beside it."""
    scratch = root.parent / "bytecode-source.py"
    scratch.write_text(source, encoding="utf-8")
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    py_compile.compile(str(scratch), cfile=str(root / rel), doraise=True)


def suite_for(root: Path, confinement: Confinement | None = None, **env: str) -> GateSuite:
    return GateSuite(
        GateConfig((GATE,), "test"),
        root,
        {**os.environ, **env} if confinement is None else env,
        interpreter=PYTHON,
        state_dir=root.parent / "state",
        confinement=confinement,
    )


def protected(root: Path) -> GateResult:
    return suite_for(root).check(GATE, "HEAD")


def repo_tests(root: Path) -> subprocess.CompletedProcess[str]:
    """The repository's tests, run by pytest with the gates' interpreter and environment."""
    env = {**suite_for(root).gate_env, "PYTHONDONTWRITEBYTECODE": "1"}
    return run_pytest(root, env, "tests")


def assert_the_tests_saw(root: Path, forged: str) -> None:
    """The control: the repository's own tests, run with pytest, fail showing `forged` (they saw
    the forged value the gate refused)."""
    ran = repo_tests(root)
    assert ran.returncode == 1 and forged in ran.stdout, ran.stdout


def dynamic_line(name: str, file: str, value: str, where: str, was: str) -> str:
    return (
        f"{file}: protected constant {name} is imported as {value} (from {where}), "
        f"not {was} as at the base commit"
    )


# -- (iii) what the change leaves alone passes ---------------------------------------------------


def test_the_untouched_tree_passes_and_its_log_says_the_imported_values_were_compared(
    tmp_path: Path,
) -> None:
    root = write_repo(tmp_path / "repo", FILES, commit=True)
    result = protected(root)
    assert result.passed, result.report
    assert f"{CONSTANTS}: textstats.constants imported from {CONSTANTS}: G as at" in result.log
    assert f"{STATS}: textstats.stats imported from {STATS}: LIMIT as at" in result.log


def test_a_change_elsewhere_and_a_reformatted_constant_pass(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", FILES, commit=True)
    change(
        root,
        {
            CONSTANTS: "G = 6.674E-11  # reformatted\nMIN_WORD = 4\n",
            "textstats/extra.py": "HELLO = 'world'\n",
            "textstats/__init__.py": "from textstats import constants as constants\n",
        },
    )
    result = protected(root)
    assert result.passed, result.report
    assert repo_tests(root).returncode == 0


# -- (i) a package, an extension or bytecode imported instead of the protected module ------------

EXTENSION = importlib.machinery.EXTENSION_SUFFIXES[0]  # e.g. .cpython-311-x86_64-linux-gnu.so

SHADOWS = {
    "package for constants.py": (
        {"textstats/constants/__init__.py": "G = 7.0e-11\nMIN_WORD = 3\n"},
        "textstats/constants/__init__.py: shadows the protected textstats/constants.py "
        "(the package is imported instead)",
        G_FORGED,
    ),
    "package for stats.py": (
        {"textstats/stats/__init__.py": "LIMIT = 11\n"},
        "textstats/stats/__init__.py: shadows the protected textstats/stats.py "
        "(the package is imported instead)",
        "assert 11 == 10",
    ),
    "package of a test folder pytest puts first": (
        {
            "tests/textstats/__init__.py": "",
            "tests/textstats/constants.py": "G = 7.0e-11\n",
            "tests/textstats/stats.py": "LIMIT = 10\n",
        },
        "tests/textstats/__init__.py: shadows the protected textstats/constants.py "
        "(it is imported as textstats instead of textstats/__init__.py)",
        G_FORGED,
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("route", sorted(SHADOWS))
def test_a_module_shadowing_the_protected_one_fails_naming_both_paths(
    tmp_path: Path, route: str
) -> None:
    files, line, seen = SHADOWS[route]
    root = write_repo(tmp_path / "repo", FILES, commit=True)
    assert repo_tests(root).returncode == 0
    change(root, files)

    result = protected(root)

    assert not result.passed
    assert line in result.report, result.report
    assert_the_tests_saw(root, seen)  # the control


@pytest.mark.slow
def test_the_forged_value_of_a_shadowing_package_is_named_with_the_file_it_came_from(
    tmp_path: Path,
) -> None:
    root = write_repo(tmp_path / "repo", FILES, commit=True)
    change(root, {"textstats/constants/__init__.py": "G = 7.0e-11\nMIN_WORD = 3\n"})
    report = protected(root).report
    where = "textstats/constants/__init__.py"
    assert dynamic_line("G", CONSTANTS, "7e-11", where, "6.674e-11") in report, report


@pytest.mark.slow
def test_a_package_made_of_bytecode_shadows_the_protected_module(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", FILES, commit=True)
    compiled(root, "textstats/constants/__init__.pyc", "G = 7.0e-11\nMIN_WORD = 3\n")

    result = protected(root)

    assert not result.passed
    assert (
        "textstats/constants/__init__.pyc: shadows the protected textstats/constants.py "
        "(the package is imported instead)"
    ) in result.report
    assert_the_tests_saw(root, G_FORGED)  # the control


@pytest.mark.slow
def test_an_extension_module_beside_the_protected_module_shadows_it(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", FILES, commit=True)
    shadow = f"textstats/constants{EXTENSION}"
    (root / shadow).write_bytes(b"not a shared object")

    result = protected(root)

    assert not result.passed
    assert (
        f"{shadow}: shadows the protected {CONSTANTS} (the extension module is imported instead)"
    ) in result.report
    # It does not import, so no value is read: the log says only the files were checked.
    assert "textstats.constants does not import with the gates' Python" in result.log
    ran = repo_tests(root)  # the control: Python tried the extension, not constants.py
    assert ran.returncode != 0 and shadow.split("/")[-1] in ran.stdout, ran.stdout


@pytest.mark.slow
def test_a_top_level_package_at_the_root_shadows_the_src_layouts(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": FILES["pyproject.toml"],
        "src/textstats/__init__.py": "",
        "src/textstats/constants.py": "G = 6.674e-11\n",
        "tests/test_values.py": (
            "from textstats.constants import G\n\ndef test_g():\n    assert G == 6.674e-11\n"
        ),
    }
    root = write_repo(tmp_path / "repo", files, commit=True)
    gate = ProtectedGate(
        name="constants", kind="protected", constants={"src/textstats/constants.py": ("G",)}
    )
    suite = GateSuite(GateConfig((gate,), "test"), root, dict(os.environ), interpreter=PYTHON)
    assert suite.check(gate, "HEAD").passed
    assert repo_tests(root).returncode == 0
    change(root, {"textstats/__init__.py": "", "textstats/constants.py": "G = 7.0e-11\n"})

    report = suite.check(gate, "HEAD").report

    assert (
        "textstats/__init__.py: shadows the protected src/textstats/constants.py "
        "(it is imported as textstats instead of src/textstats/__init__.py)"
    ) in report, report
    assert (
        dynamic_line("G", "src/textstats/constants.py", "7e-11", CONSTANTS, "6.674e-11") in report
    )
    assert_the_tests_saw(root, G_FORGED)  # the control


@pytest.mark.slow
def test_a_namespace_folder_shadows_a_module_of_a_namespace_package_when_it_comes_first(
    tmp_path: Path,
) -> None:
    files = {k: v for k, v in FILES.items() if k != "textstats/__init__.py"}
    root = write_repo(tmp_path / "repo", files, commit=True)
    # No __init__.py on either side: Python joins both folders, the test folder's first.
    change(root, {"tests/textstats/constants.py": "G = 7.0e-11\nMIN_WORD = 3\n"})

    result = protected(root)

    assert not result.passed
    assert (
        "tests/textstats/constants.py: shadows the protected textstats/constants.py "
        "(it is imported instead)"
    ) in result.report, result.report
    assert_the_tests_saw(root, G_FORGED)  # the control


# -- what Python does not import instead ----------------------------------------------------------


@pytest.mark.slow
def test_a_folder_without_init_beside_the_protected_module_passes(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", FILES, commit=True)
    # A namespace folder: Python imports constants.py, which a module found anywhere beats.
    change(root, {"textstats/constants/forged.py": "G = 7.0e-11\n"})

    result = protected(root)

    assert result.passed, result.report
    assert f"textstats.constants imported from {CONSTANTS}" in result.log
    assert repo_tests(root).returncode == 0  # the control: the tests see the real value


@pytest.mark.slow
def test_bytecode_beside_the_protected_module_fails_though_the_source_is_what_is_imported(
    tmp_path: Path,
) -> None:
    root = write_repo(tmp_path / "repo", FILES, commit=True)
    compiled(root, "textstats/constants.pyc", "G = 7.0e-11\nMIN_WORD = 3\n")

    result = protected(root)

    assert not result.passed
    assert "textstats/constants.pyc: bytecode beside the protected textstats/constants.py" in (
        result.report
    )
    assert "shadows" not in result.report  # Python's rule: the source wins while it is there
    assert repo_tests(root).returncode == 0  # the control: the tests see the real value


# -- (ii) the value rebound when the package is imported: only the import shows it --------------

REBINDINGS = {
    "an attribute set by the package": (
        "from textstats import constants\n\nconstants.G = 7.0e-11\n",
        dynamic_line("G", CONSTANTS, "7e-11", CONSTANTS, "6.674e-11"),
    ),
    "a module swapped in sys.modules": (
        """
        import sys
        import types

        forged = types.ModuleType("textstats.constants")
        forged.G, forged.MIN_WORD = 7.0e-11, 3
        sys.modules["textstats.constants"] = forged
        """,
        dynamic_line("G", CONSTANTS, "7e-11", "a module with no file", "6.674e-11"),
    ),
    "a float whose repr lies": (
        """
        from textstats import constants


        class Exact(float):
            def __repr__(self):
                return "6.674e-11"


        constants.G = Exact(7.0e-11)
        """,
        f"{CONSTANTS}: protected constant G is imported as an object of type Exact, not a "
        f"literal (from {CONSTANTS}); it was 6.674e-11",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("route", sorted(REBINDINGS))
def test_a_value_rebound_at_import_fails_naming_both_values_and_where_it_came_from(
    tmp_path: Path, route: str
) -> None:
    init, line = REBINDINGS[route]
    root = write_repo(tmp_path / "repo", FILES, commit=True)
    change(root, {"textstats/__init__.py": init})

    result = protected(root)

    assert not result.passed
    assert line in result.report, result.report
    assert "shadows" not in result.report  # no file stands in for constants.py: static misses it
    assert_the_tests_saw(root, G_FAILED)  # the control


# -- a module that cannot be imported by the gates -------------------------------------------------


@pytest.mark.slow
def test_a_package_that_needs_a_missing_dependency_falls_back_to_the_static_checks(
    tmp_path: Path,
) -> None:
    files = {**FILES, "textstats/__init__.py": "import no_such_dependency_ssw_21\n"}
    root = write_repo(tmp_path / "repo", files, commit=True)

    untouched = protected(root)
    change(root, {"textstats/constants/__init__.py": "G = 7.0e-11\n"})
    shadowed = protected(root)

    assert untouched.passed, untouched.report
    assert (
        f"{CONSTANTS}: textstats.constants does not import with the gates' Python "
        "(ModuleNotFoundError: No module named 'no_such_dependency_ssw_21'): its values were "
        "checked in the file only"
    ) in untouched.log
    assert not shadowed.passed
    assert "textstats/constants/__init__.py: shadows the protected" in shadowed.report


# -- inside the run's sandbox ---------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["bwrap", "unshare"])
def test_the_imported_values_are_read_inside_the_sandbox(tmp_path: Path, backend: str) -> None:
    try:
        sandbox = choose_sandbox(backend)
    except UsageError as exc:
        pytest.skip(f"{backend} does not run here: {exc}")
    root = write_repo(tmp_path / "repo", FILES, commit=True)
    home = tmp_path / "home"
    (home / "tmp").mkdir(parents=True)
    env = child_env(os.environ, home)
    policy = policy_for_worktree(root, root, home, env, read_only=(PACKAGE,))
    suite = suite_for(root, Confinement(sandbox, policy), **env)

    untouched = suite.check(GATE, "HEAD")
    change(root, {"textstats/__init__.py": REBINDINGS["an attribute set by the package"][0]})
    forged = suite.check(GATE, "HEAD")

    assert untouched.passed, untouched.report
    assert f"textstats.constants imported from {CONSTANTS}: G as at" in untouched.log
    assert not forged.passed
    assert dynamic_line("G", CONSTANTS, "7e-11", CONSTANTS, "6.674e-11") in forged.report
