#!/usr/bin/env bash
# Set up the real projects of the in-run gates benchmark (bench/gates/inrun.py), each as a user's
# checkout looks: the PyPI sdist (which ships the tests) as a git repository, with its OWN .venv
# inside the repository (ignored by git) holding pytest, the test dependencies and an editable
# install of the project, by its own build backend (hatchling, flit, setuptools).
# Usage: bash bench/gates/setup-real.sh [python-dateutil|boltons|pyflakes ...]   (default: all)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="$HERE/.work"
PYTHON_BIN="${PYTHON_BIN:-python3}"
PIP=(--quiet --disable-pip-version-check)
mkdir -p "$WORK"

setup_one() {
    local name="$1" version="$2" unpacked="$3" deps="$4"
    local project="$WORK/$name-$version"
    if [ ! -d "$project/.git" ]; then
        rm -rf "$project" "$WORK/sdist-$name"
        mkdir -p "$WORK/sdist-$name"
        "$PYTHON_BIN" -m pip download "${PIP[@]}" --no-binary :all: --no-deps \
            -d "$WORK/sdist-$name" "$name==$version"
        tar --no-same-owner -xzf "$WORK/sdist-$name"/*.tar.gz -C "$WORK"
        [ "$WORK/$unpacked" = "$project" ] || mv "$WORK/$unpacked" "$project"
        git -C "$project" init --quiet
        printf '.venv/\n.ssw/\n' >> "$project/.git/info/exclude"
        git -C "$project" add --all
        git -C "$project" -c user.name=bench -c user.email=bench@localhost \
            commit --quiet -m "$name $version sdist"
    fi
    if [ -n "$(git -C "$project" status --porcelain --untracked-files=no)" ]; then
        echo "setup: $project has uncommitted changes (a mutation left behind?); restoring" >&2
        git -C "$project" checkout --quiet -- .
    fi
    if [ ! -x "$project/.venv/bin/python" ]; then
        "$PYTHON_BIN" -m venv "$project/.venv"
        # shellcheck disable=SC2086
        "$project/.venv/bin/python" -m pip install "${PIP[@]}" pytest==9.2.0 coverage==7.17.5 $deps
        # The project's own backend, as `pip install -e .` in a user's checkout runs it.
        SETUPTOOLS_SCM_PRETEND_VERSION="$version" \
            "$project/.venv/bin/python" -m pip install "${PIP[@]}" --no-deps -e "$project"
    fi
    # The commit subjects, read once: `git log | grep -q` under pipefail fails when grep stops
    # reading early (git gets SIGPIPE), which had re-applied a step that was already committed.
    local subjects
    subjects="$(git -C "$project" log --format=%s)"
    if [ "$name" = python-dateutil ] && ! grep -q "tzdata" <<<"$subjects"; then
        # Three tests disagree with this machine's system tzdata on a clean tree: deselected, in
        # a commit of their own, so that the clean tree passes its gates.
        sed -i 's|^\[tool.pytest.ini_options\]$|[tool.pytest.ini_options]\naddopts = "--deselect=tests/test_tz.py::test_gettz_link --deselect=tests/test_tzfile.py::test_gettz_local_abbreviation_without_time_zone_data --deselect=tests/test_tzpath_data.py::test_dst_matches_tzdata_zi"|' "$project/pyproject.toml"
        git -C "$project" -c user.name=bench -c user.email=bench@localhost \
            commit --quiet -am "bench: deselect three tests that fail against this machine's tzdata"
    fi
    if [ "$name" = python-dateutil ] && ! grep -q "worktree" <<<"$subjects"; then
        # A run's worktree holds what git tracks: hatch-vcs writes src/dateutil/_version.py at
        # install time into the checkout, ignored by git, so in a worktree dateutil.__version__
        # is "unknown" and this test fails on the untouched tree (every mutation would then
        # "fail" for it). Deselected, in a commit of its own, and reported (bench/gates/README.md).
        sed -i 's|^addopts = "--deselect=|addopts = "--deselect=tests/test_imports.py::test_version_matches_distribution_metadata --deselect=|' "$project/pyproject.toml"
        git -C "$project" -c user.name=bench -c user.email=bench@localhost \
            commit --quiet -am "bench: deselect the version test a worktree cannot pass (no _version.py)"
    fi
    "$project/.venv/bin/python" -m pip freeze --disable-pip-version-check > "$WORK/freeze-$name.txt"
    echo "setup: $name $version in $project (own .venv)"
}

wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(python-dateutil boltons pyflakes)
for name in "${wanted[@]}"; do
    case "$name" in
        python-dateutil) setup_one python-dateutil 4.0.0 python_dateutil-4.0.0 \
            "hypothesis==6.170.17 freezegun attrs pytest-cov" ;;
        boltons) setup_one boltons 26.2.0 boltons-26.2.0 "" ;;
        pyflakes) setup_one pyflakes 4.1.0 pyflakes-4.1.0 "" ;;
        *) echo "unknown project $name" >&2; exit 2 ;;
    esac
done
