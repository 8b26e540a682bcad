#!/usr/bin/env bash
# Prepare a fresh Debian machine for fabricgen.
#   scripts/setup.sh          the Python environment in .venv with fabricgen installed;
#                             `. .venv/bin/activate` then puts fabricgen on PATH (README quick start)
#   scripts/setup.sh --test   also the test tools: the Debian packages of the real
#                             OVN/OVS daemons, netplan, FRR and nftables that the tests drive
set -euo pipefail
cd "$(dirname "$0")/.."

want_test=0
[ "${1:-}" = "--test" ] && want_test=1

DEBIAN_PACKAGES=(
  openvswitch-switch   # ovsdb-server, ovs-vsctl (netplan's OVS backend needs it too)
  ovn-central          # ovn-northd, ovn-nbctl, ovn-sbctl, NB/SB schemas
  ovn-host             # ovn-controller, ovn-trace
  ovn-ic               # ovn-ic daemon
  ovn-ic-db            # IC NB/SB schemas, ovn-ic-nbctl, ovn-ic-sbctl
  netplan.io           # netplan generate
  frr                  # vtysh --dryrun for BGP snippets
  nftables             # nft -c for firewall rule files
  graphviz             # dot: fabricgen graph --format svg
  lua5.1               # the Argo CD health checks, as gopher-lua (Lua 5.1) runs them
)

if [ "$want_test" = 1 ]; then
  missing=()
  for pkg in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
      echo "setup: need root to install Debian packages: ${missing[*]}" >&2
      exit 1
    fi
    echo "setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # Package scripts may try to start services; in a container that may fail harmlessly.
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  for tool in kubectl kpt; do
    command -v "$tool" >/dev/null || echo "setup: warning: $tool not found; tests that need it will be skipped" >&2
  done
fi

# Debian's python3 has the venv module but not ensurepip, which `python3 -m venv` needs to put pip
# into the environment: that is the python3-venv package.
if ! python3 -c "import ensurepip" 2>/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing python3-venv (python3 -m venv needs it)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
  else
    echo "setup: python3 -m venv needs ensurepip; on Debian or Ubuntu: sudo apt-get install python3-venv" >&2
    exit 1
  fi
fi
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
if [ "$want_test" = 1 ]; then
  .venv/bin/python -m pip install -q -e '.[test]'
else
  .venv/bin/python -m pip install -q .
fi
echo "setup: fabricgen is installed in .venv; put it on PATH in this shell with: . .venv/bin/activate" >&2
