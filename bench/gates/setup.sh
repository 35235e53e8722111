#!/usr/bin/env bash
# Set up the benchmark's target project: packaging 26.4 from its PyPI sdist (which ships its
# test suite), in a venv of its own with its pinned test dependencies, as a git repository so
# that every mutation is a diff against a clean tree. Everything lands in bench/gates/.work/
# (gitignored). Idempotent: an existing, clean setup is kept.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="$HERE/.work"
NAME=packaging
VERSION=26.4
PROJECT="$WORK/$NAME-$VERSION"
VENV="$WORK/venv"
PYTHON_BIN="${PYTHON_BIN:-python3}"

mkdir -p "$WORK"

if [ ! -d "$PROJECT/.git" ]; then
    rm -rf "$PROJECT" "$WORK/sdist"
    mkdir -p "$WORK/sdist"
    # The sdist, not the wheel: only the sdist has tests/.
    "$PYTHON_BIN" -m pip download --quiet --no-binary :all: --no-deps \
        -d "$WORK/sdist" "$NAME==$VERSION"
    tar -xzf "$WORK/sdist/$NAME-$VERSION.tar.gz" -C "$WORK"
    git -C "$PROJECT" init --quiet
    git -C "$PROJECT" add --all
    git -C "$PROJECT" -c user.name=bench -c user.email=bench@localhost \
        commit --quiet -m "$NAME $VERSION sdist"
fi

if [ -n "$(git -C "$PROJECT" status --porcelain --untracked-files=no)" ]; then
    echo "setup: $PROJECT has uncommitted changes (a mutation left behind?); restoring" >&2
    git -C "$PROJECT" checkout --quiet -- .
fi

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON_BIN" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$HERE/requirements.txt"
# Editable, so the tests run against the working tree that the mutations change.
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -e "$PROJECT"
"$VENV/bin/python" -c "import packaging, sys; assert packaging.__file__.startswith('$PROJECT'), packaging.__file__"
"$VENV/bin/python" -m pip freeze --disable-pip-version-check > "$WORK/freeze.txt"
echo "setup: $NAME $VERSION in $PROJECT, venv $VENV"
