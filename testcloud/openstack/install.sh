#!/usr/bin/env bash
# Make (or reuse) the test cloud's venv at $STACKTOP_TESTCLOUD_HOME/openstack/venv.
# Reused as is when its stamp (sha256 of requirements.txt + uc.txt + the Python version) matches.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/common.sh"
PY="${STACKTOP_TESTCLOUD_PYTHON:-python3}"
want="$( { cat "$HERE/requirements.txt" "$HERE/uc.txt"; "$PY" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1)"
stamp="$VENV/.stacktop-stamp"
if [ -x "$VENV/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  log "venv reused ($VENV)"
  exit 0
fi
t0=$SECONDS
log "installing the OpenStack venv into $VENV (about a minute)"
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q -U pip wheel setuptools
# (grep: drop the noise of find-links folders this machine configures but does not have)
"$VENV/bin/pip" install -q -c "$HERE/uc.txt" -r "$HERE/requirements.txt" 2> >(grep -v "is ignored: it is neither" >&2)
echo "$want" > "$stamp"
log "venv ready ($(du -sm "$VENV" | cut -f1) MB) in $((SECONDS - t0)) s"
