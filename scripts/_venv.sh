# Sourced by scripts/demo and scripts/test: make .venv with stacktop (and its test extra) when missing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
VENV="$ROOT/.venv"
stamp="$VENV/.stacktop-installed"
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
    || { echo "stacktop needs Python 3.11+: set PYTHON=/path/to/python3.11" >&2; exit 3; }
  "$PY" -m venv "$VENV"
fi
if [ ! -f "$stamp" ] || [ "$ROOT/pyproject.toml" -nt "$stamp" ]; then
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install -q -e "$ROOT[test]"
  touch "$stamp"
fi
