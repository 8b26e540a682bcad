"""Raft addresses as OVSDB means them, so two spellings of one address are one member.

A raft member's address is an OVSDB stream name (openvswitch/ovs `lib/stream.c`,
`lib/socket-util.c` `inet_parse_active`): `tcp:HOST:PORT`, `ssl:HOST:PORT` or `unix:PATH`, where
HOST may be written in brackets whatever its family. Kube-OVN writes every member bracketed, IPv4
included (`dist/images/start-ic-db.sh` and `start-db.sh` pass `--db-*-cluster-local-addr="[IP]"`
to ovn-ctl, which makes `tcp:[IP]:PORT`; with `ENABLE_SSL` the protocol is `ssl:`), while a
fabric names its members by their bare addresses. `key` maps every spelling of one address to one
value; `address` writes an address the way OVSDB's own tools print one.
"""

from __future__ import annotations

import re
from ipaddress import ip_address

_INET = re.compile(r"^(?P<proto>tcp|ssl):(?:\[(?P<bracketed>[^\]]*)\]|(?P<bare>[^:\[\]]*)):(?P<port>\d{1,5})$")


def key(address: str) -> str:
    """One value per member address: `tcp:[10.0.0.1]:6647`, `tcp:10.0.0.1:6647` and
    `ssl:[10.0.0.1]:06647` are one member. The host is compared as an IP address (IPv6 in its
    compressed form; a bare host ends at its first colon, so an IPv6 host is always bracketed)
    and the port as a number. The protocol is left out: one host and port is one listener,
    `tcp:` or `ssl:`, and a cluster's members all speak one (Kube-OVN's `ENABLE_SSL` turns every
    one to `ssl:`), so a fabric that does not say which still names the right member. Anything
    else (`unix:PATH`, a host name) is compared as written."""
    match = _INET.match(address.strip())
    if match is None:
        return address.strip()
    host = match["bracketed"] if match["bracketed"] is not None else match["bare"]
    try:
        host = ip_address(host).compressed
    except ValueError:
        host = host.lower()
    return f"inet:[{host}]:{int(match['port'])}"


def same(first: str, second: str) -> bool:
    """Whether two raft addresses are one member's."""
    return key(first) == key(second)


def address(protocol: str, host: str, port: int) -> str:
    """`PROTOCOL:HOST:PORT` with an IPv6 host in brackets, as `cluster/status` prints one that
    was given bare (`tcp:10.0.0.1:6643`, `ssl:[fd00::1]:6643`)."""
    try:
        version = ip_address(host).version
    except ValueError:
        version = 4
    return f"{protocol}:[{host}]:{port}" if version == 6 else f"{protocol}:{host}:{port}"
