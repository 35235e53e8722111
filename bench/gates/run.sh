#!/usr/bin/env bash
# The gates benchmark, end to end: bash bench/gates/run.sh [--regen]
#   1. setup.sh: packaging 26.4 from its PyPI sdist, in bench/gates/.work/ (gitignored)
#   2. mutate.py: only with --regen or when mutations.json is missing (about 10 minutes)
#   3. bench.py: measures every mutation, writes results.csv and summary.json
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PY="$REPO/.venv/bin/python"  # the stepswitch venv: bench.py imports stepswitch.gates.impacted

bash "$HERE/setup.sh"
if [ "${1:-}" = "--regen" ] || [ ! -f "$HERE/mutations.json" ]; then
    "$PY" "$HERE/mutate.py"
fi
"$PY" "$HERE/bench.py"
