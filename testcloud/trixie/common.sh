# shellcheck shell=bash
# Where the trixie root lives: the test bed's cache folder (scripts/testcloud's STACKTOP_TESTCLOUD_HOME).
TESTCLOUD_HOME="${STACKTOP_TESTCLOUD_HOME:-${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}/.cache/stacktop/testcloud}"
TRIXIE_ROOT="${TRIXIE_ROOT:-$TESTCLOUD_HOME/trixie/root}"
