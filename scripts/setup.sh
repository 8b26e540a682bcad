#!/usr/bin/env bash
# Prepare a fresh Debian machine for fabricgen.
#   scripts/setup.sh          the Python environment in .venv with fabricgen installed;
#                             `. .venv/bin/activate` then puts fabricgen on PATH (README quick start)
#   scripts/setup.sh --test   also the test tools: the Debian packages of the real
#                             OVN/OVS daemons, netplan, FRR and nftables that the tests drive,
#                             and Debian 13's OVN 25.03 and OVS 3.5 in .ovn/25.03 (see below)
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
  frr                  # vtysh --dryrun, and zebra/bgpd in verify's kernel underlay
  nftables             # nft -c, and the rendered firewalls loaded in verify's kernel underlay
  iproute2             # ip netns, veth: verify's kernel underlay
  graphviz             # dot: fabricgen graph --format svg
  lua5.1               # the Argo CD health checks, as gopher-lua (Lua 5.1) runs them
  strace               # holds a system call so that a signal lands while a temporary file exists
  openssl              # the certificate of the HTTPS API server the token test runs
  prometheus           # promtool, and the Prometheus that scrapes the exporter in the watch's end-to-end test
  prometheus-alertmanager  # the Alertmanager that notifies the end-to-end test's webhook
  mariadb-server       # the database of the Neutron the tests start (tests/support/neutron_cloud.py)
)

# Debian 13's OVN 25.03 and OVS 3.5 (what Kube-OVN 1.15 and later run), next to the system's
# OVN: the .deb files of Debian 13 (trixie) are fetched with apt-get through a private apt
# configuration in .ovn/apt (the machine's own apt sources and state are not touched) and
# extracted into .ovn/25.03/root; .ovn/25.03/bin gets one script per program that starts it
# through the loader of the extracted libc6 with the extracted libraries only, and
# .ovn/25.03/share the schemas: a prefix for `fabricgen verify --ovn-prefix .ovn/25.03`.
DEBIAN13_SUITE=trixie
DEBIAN13_KEYRING=/usr/share/keyrings/debian-archive-trixie-stable.gpg
DEBIAN13_MIRROR=http://deb.debian.org/debian
DEBIAN13_PACKAGES=(
  ovn-common ovn-central ovn-host ovn-ic ovn-ic-db openvswitch-common openvswitch-switch
  # the libraries they link, down to libc6 and its loader
  libc6 libcap-ng0 libcap2 libssl3t64 libunbound8 libevent-2.1-7t64 libudev1 libbpf1 libelf1t64
  libnuma1 libxdp1 libzstd1 zlib1g
)
install_debian13_ovn() {
  local top=.ovn prefix=.ovn/25.03
  if [ -x "$prefix/bin/ovn-nbctl" ] && "$prefix/bin/ovn-nbctl" --version 2>/dev/null | grep -q ' 25\.03\.'; then
    return 0
  fi
  if [ ! -f "$DEBIAN13_KEYRING" ]; then
    echo "setup: $DEBIAN13_KEYRING is missing (package debian-archive-keyring); cannot fetch OVN 25.03" >&2
    exit 1
  fi
  echo "setup: fetching Debian 13's OVN 25.03 and OVS 3.5 into $prefix" >&2
  rm -rf "$top/apt" "$prefix"
  mkdir -p "$top/apt/lists/partial" "$top/apt/cache/archives/partial" "$top/apt/debs" "$prefix/root" "$prefix/bin" "$prefix/share"
  echo "deb [signed-by=$DEBIAN13_KEYRING] $DEBIAN13_MIRROR $DEBIAN13_SUITE main" > "$top/apt/sources.list"
  : > "$top/apt/status"
  local here; here=$(pwd)
  local apt=(-o "Dir::Etc::SourceList=$here/$top/apt/sources.list" -o "Dir::Etc::SourceParts=$here/$top/apt/none"
             -o "Dir::State::Lists=$here/$top/apt/lists" -o "Dir::State::status=$here/$top/apt/status"
             -o "Dir::Cache=$here/$top/apt/cache" -o "Dir::Cache::archives=$here/$top/apt/cache/archives"
             -o "APT::Architecture=$(dpkg --print-architecture)" -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1")
  apt-get "${apt[@]}" -qq update
  (cd "$top/apt/debs" && apt-get "${apt[@]}" -qq download "${DEBIAN13_PACKAGES[@]}")
  for deb in "$top"/apt/debs/*.deb; do
    dpkg-deb -x "$deb" "$prefix/root"
  done
  local root; root=$(cd "$prefix/root" && pwd)
  local loader; loader=$(ls "$root"/usr/lib/*/ld-linux*.so.* | head -n 1)
  local libs; libs=$(dirname "$loader")
  for program in "$root"/usr/bin/* "$root"/usr/sbin/* "$root"/usr/lib/openvswitch-switch/ovs-vswitchd; do
    # ELF programs only (the Python tools need Debian 13's Python)
    [ "$(head -c 4 "$program" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    printf '#!/bin/sh\nexec "%s" --library-path "%s" "%s" "$@"\n' "$loader" "$libs" "$program" \
      > "$prefix/bin/$(basename "$program")"
    chmod 0755 "$prefix/bin/$(basename "$program")"
  done
  ln -sfn ../root/usr/share/ovn "$prefix/share/ovn"
  ln -sfn ../root/usr/share/openvswitch "$prefix/share/openvswitch"
  rm -rf "$top/apt"
  echo "setup: $("$prefix/bin/ovn-nbctl" --version | head -n 1), $("$prefix/bin/ovs-vswitchd" --version | head -n 1)" >&2
}

# Neutron in .neutron, an environment of its own (its pins are not fabricgen's): the tests start its
# API with the ML2/OVN driver against the lab's OVN and run the rendered security-group playbooks
# against it with ansible-playbook, whose openstack.cloud modules run in this environment.
#   neutron 28.0.1        the release docs/policy.md cites
#   neutron-lib 3.25.0    5.x no longer has Context.tenant_id, which 28.0.1's quota hook reads
#   openstacksdk 4.14.0   openstack.cloud 2.5.0 reads openstack.version, which 4.15 and later
#                         no longer import with the package
#   PyMySQL               Neutron's driver for its MariaDB database
NEUTRON_PINS=(neutron==28.0.1 neutron-lib==3.25.0 openstacksdk==4.14.0 PyMySQL==1.2.4)
install_neutron() {
  local env=.neutron want="${NEUTRON_PINS[*]}"
  if [ -x "$env/bin/python" ] && [ "$(cat "$env/pins" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  echo "setup: installing ${NEUTRON_PINS[*]} into $env" >&2
  rm -rf "$env"
  python3 -m venv "$env"
  "$env/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$env/bin/python" -m pip install -q "${NEUTRON_PINS[@]}"
  echo "$want" > "$env/pins"
}

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
  install_debian13_ovn
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
  install_neutron
else
  .venv/bin/python -m pip install -q .
fi
echo "setup: fabricgen is installed in .venv; put it on PATH in this shell with: . .venv/bin/activate" >&2
