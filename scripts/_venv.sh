# Sourced by scripts/demo and scripts/test: make .venv with stacktop when missing or out of date.
# STACKTOP_EXTRA=test (scripts/test sets it) installs the test extra too; without it, only what stacktop needs
# to run (scripts/demo: no test tools before the first screen).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
VENV="$ROOT/.venv"
stamp="$VENV/.stacktop-installed"  # what the last install was: "runtime" or "test" (empty: test)
want="${STACKTOP_EXTRA:-runtime}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
    || { echo "stacktop needs Python 3.11+: set PYTHON=/path/to/python3.11" >&2; exit 3; }
  "$PY" -m venv "$VENV"
fi
have=""
[ -f "$stamp" ] && have="$(cat "$stamp")" && have="${have:-test}"
if [ -z "$have" ] || [ "$ROOT/pyproject.toml" -nt "$stamp" ] || { [ "$want" = test ] && [ "$have" != test ]; }; then
  target="$ROOT"
  [ "$want" = test ] && target="$ROOT[test]"
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install -q -e "$target"
  echo "$want" > "$stamp"
fi
