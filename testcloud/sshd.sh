#!/usr/bin/env bash
# SSH profile of the stacktop test bed: an OpenSSH server on loopback that the per-host log sources read
# through, with host names compute-01 and compute-02 that resolve to it only through its own ssh config.
#
#   sshd.sh up       host key and client key (once, cached), sshd on 127.0.0.1:$PORT (apt-get install
#                    openssh-server when /usr/sbin/sshd is missing: the machine's own Debian release), the
#                    ssh config; a quick no-op when sshd answers with its host key
#   sshd.sh down     stop the sshd this script started (by its recorded PID); keys stay
#   sshd.sh status   one line; exit 0 only when `ssh -F <config> compute-01 true` succeeds
#   sshd.sh reset    up (nothing else holds state)
#
# Nothing outside <cache>/sshd changes: ~/.ssh is not read or written (the config names its own identity and
# known_hosts and is passed with -F), the machine's sshd service is not enabled or started (the package's
# own service is left to policy-rc.d), and this sshd accepts only the test key, only from 127.0.0.1.
# Files in ${STACKTOP_TESTCLOUD_HOME:-~/.cache/stacktop/testcloud}/sshd/:
#   host_ed25519_key(.pub)   the server's host key    id_ed25519(.pub)  the client key made for the tests
#   authorized_keys  sshd_config  sshd.pid  sshd.log  known_hosts  ssh_config (Host compute-01 compute-02)
set -euo pipefail
HOME_DIR="${STACKTOP_TESTCLOUD_HOME:-${HOME:-/root}/.cache/stacktop/testcloud}"
S="$HOME_DIR/sshd"
PORT="${STACKTOP_SSHD_PORT:-13522}"
SSHD=/usr/sbin/sshd

log() { echo "[sshd.sh $(date +%T)] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

install_sshd() {
  [[ -x "$SSHD" ]] && return 0
  mkdir -p "$S"
  log "sshd is missing: apt-get install openssh-server"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q openssh-server >"$S/apt.log" 2>&1 \
    || { apt-get update -q >>"$S/apt.log" 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
         openssh-server >>"$S/apt.log" 2>&1; } \
    || die "openssh-server is missing and apt-get install -y openssh-server failed (see $S/apt.log)"
}

make_files() {
  mkdir -p "$S"; chmod 700 "$S"
  [[ -f "$S/host_ed25519_key" ]] || ssh-keygen -q -t ed25519 -N '' -C "stacktop test bed sshd" -f "$S/host_ed25519_key"
  [[ -f "$S/id_ed25519" ]] || ssh-keygen -q -t ed25519 -N '' -C "stacktop test bed client" -f "$S/id_ed25519"
  ( umask 077; printf 'from="127.0.0.1",no-port-forwarding,no-agent-forwarding,no-X11-forwarding %s\n' \
      "$(cat "$S/id_ed25519.pub")" >"$S/authorized_keys" )
  local user; user="$(id -un)"
  cat >"$S/sshd_config" <<CFG
ListenAddress 127.0.0.1:$PORT
HostKey $S/host_ed25519_key
PidFile $S/sshd.pid
AuthorizedKeysFile $S/authorized_keys
AllowUsers $user
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
UsePAM no
StrictModes no
AllowTcpForwarding no
X11Forwarding no
PermitTTY no
MaxStartups 50:30:100
MaxSessions 50
LogLevel INFO
CFG
  printf '[127.0.0.1]:%s %s\n' "$PORT" "$(cut -d' ' -f1,2 "$S/host_ed25519_key.pub")" >"$S/known_hosts"
  cat >"$S/ssh_config" <<CFG
Host compute-01 compute-02
  HostName 127.0.0.1
  Port $PORT
  User $user
  IdentityFile $S/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $S/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 10
  LogLevel ERROR
CFG
}

answers() { ssh -F "$S/ssh_config" -o ConnectTimeout=5 compute-01 true </dev/null >/dev/null 2>&1; }

running_pid() {
  local pid; pid="$(cat "$S/sshd.pid" 2>/dev/null || true)"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

up() {
  install_sshd
  make_files
  if running_pid >/dev/null && answers; then log "sshd answers on 127.0.0.1:$PORT"; return 0; fi
  local old; old="$(running_pid || true)"
  [[ -n "$old" ]] && kill "$old" 2>/dev/null || true
  mkdir -p /run/sshd
  "$SSHD" -t -f "$S/sshd_config" || die "sshd rejects $S/sshd_config"
  "$SSHD" -f "$S/sshd_config" -E "$S/sshd.log"
  for _ in $(seq 1 50); do
    answers && { log "sshd up on 127.0.0.1:$PORT (config $S/ssh_config)"; return 0; }
    sleep 0.2
  done
  die "sshd did not answer on 127.0.0.1:$PORT (see $S/sshd.log)"
}

down() {
  local pid; pid="$(running_pid || true)"
  if [[ -n "$pid" ]]; then kill "$pid"; log "sshd ($pid) stopped"; else log "sshd not running"; fi
  rm -f "$S/sshd.pid"
}

status() {
  if [[ -f "$S/ssh_config" ]] && answers; then echo "sshd: up on 127.0.0.1:$PORT ($S/ssh_config)"; return 0; fi
  echo "sshd: down"; return 1
}

case "${1:-}" in
  up|reset) up ;;
  down) down ;;
  status) status ;;
  *) echo "usage: testcloud/sshd.sh up|down|status|reset" >&2; exit 2 ;;
esac
