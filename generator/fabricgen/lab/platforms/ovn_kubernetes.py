"""What OVN-Kubernetes writes into its northbound DB for the rendered NetworkPolicies.

Modelled on ovn-kubernetes v1.0.0 and v1.3.0, `go-controller/pkg/ovn/`
`base_network_controller_policy.go` (`createDefaultDenyPGAndACLs`, `buildDenyACLs`),
`gress_policy.go` (`buildLocalPodACLs`, `getMatchFromIPBlock`), `pkg/libovsdb/util/acl.go`
(`BuildACL`, `getL4Match`) and `pkg/types/const.go`:

- per namespace, a default-deny port group per direction (`NetpolNamespace`); a policy's
  selected pods join the direction's group its `policyTypes` names. Ingress: `outport == @G`
  drop at 1000 and `outport == @G && (arp || nd)` allow at 1001, `to-lport`; egress the same
  with `inport`, `from-lport` and `options:apply-after-lb=true`;
- per policy, a port group of its selected pods, and per ingress rule and protocol an
  `allow-related` ACL at 1001, `to-lport`, named `NP:<namespace>:<policy>:Ingress:<index>` (63
  characters at most): `L3 && L4 && outport == @P`, where L3 is, for the rule's ipBlocks, before
  v1.3.0 `ip4.src == CIDR` (` && ip4.src != {EXCEPT, ...}`) in one ACL per ipBlock
  (`ip-block-index` its position), from v1.3.0 one ACL for all of them, `(B1 || B2)` with each
  block in parentheses where it has an `except` (`ip-block-index` -2; commit fd2701582), and for
  the rule's pod selectors `ip4.src == {$A}` (an Address_Set of the selected pods' addresses,
  `ip-block-index` -1); L4 (`getL4Match`, the same at both) `tcp && tcp.dst==N`, several ports
  `tcp.dst=={N,M}`, a range `N<=tcp.dst<=M`, a list beside ranges `tcp && (... || ...)`, none for
  a rule without ports;
- every ACL in tier 2 (`DefaultACLTier`, where the schema has tiers), with the
  `k8s.ovn.org/owner-controller`, `owner-type` and `id` external_ids;
- per AdminNetworkPolicy (`pkg/ovn/controller/admin_network_policy/`, the same in v1.0.0 to
  v1.3.0), a port group of its subject's pods and per ingress rule an Address_Set of its peers'
  pods (`AdminNetworkPolicy:<anp>:Ingress:<index>:v4`), and per rule and protocol an ACL in tier 1
  (`DefaultANPACLTier`) at 30000 - 100 x priority - index (`ANPFlowStartPriority`), `Allow`
  `allow-related`, `Deny` `drop`, `Pass` `pass`, `outport == @P && ((ip4.src == $A))` with the
  rule's L4 as above, named `ANP:<anp>:Ingress:<index>`. Only where the schema has tiers (a pass
  means nothing without them; FG912 refuses v1.3.0 there).

Row names are `HashForOVN` of the row's id (`pkg/util/util.go`: `a` and the decimal FNV-1a 64 of
the id `default-network-controller:TYPE:KEYS`). Not modelled: the hairpin allow on the cluster
port group and the allow from each node's management port (no node switch in the lab), named
ports, egress rules (fabricgen renders ingress only).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fabricgen.lab.platforms import nb_rows
from fabricgen.model.consumers import OVN_KUBERNETES_VERSION, ovn_kubernetes_release
from fabricgen.model.names import NAMESPACE_NAME_LABEL
from fabricgen.platform_rows.acls import Acl

CONTROLLER = "default-network-controller"
DENY_PRIORITY, ALLOW_PRIORITY = 1000, 1001
TIER = 2
ANP_TIER, ANP_FLOW_START, ANP_RULES_MAX = 1, 30000, 100  # DefaultANPACLTier, ANPFlowStartPriority, ANPMaxRulesPerObject
ANP_ACTIONS = {"Allow": "allow-related", "Deny": "drop", "Pass": "pass"}  # GetACLActionForANPRule
_FNV_OFFSET, _FNV_PRIME = 14695981039346656037, 1099511628211


@dataclass(frozen=True)
class Pod:
    """A pod of the lab: its namespace, labels, logical port and address."""

    namespace: str
    labels: tuple[tuple[str, str], ...]
    port: str
    address: str


def hash_for_ovn(text: str) -> str:
    """`util.HashForOVN`: `a` and the decimal FNV-1a 64 of the text."""
    value = _FNV_OFFSET
    for byte in text.encode():
        value = ((value ^ byte) * _FNV_PRIME) % (1 << 64)
    return f"a{value}"


def _selected(pods: Sequence[Pod], namespace: str | None, selector: Mapping[str, Any]) -> list[Pod]:
    labels = dict(selector.get("matchLabels", {})).items()
    return [p for p in pods if namespace in (None, p.namespace) and labels <= dict(p.labels).items()]


def _peer_pods(pods: Sequence[Pod], namespace: str, peer: Mapping[str, Any]) -> list[Pod]:
    """The pods a peer with a podSelector and/or namespaceSelector selects."""
    spaces = peer.get("namespaceSelector")
    wanted = dict(spaces.get("matchLabels", {})).items() if spaces is not None else None
    chosen = [p for p in pods if (p.namespace == namespace if wanted is None else
                                  wanted <= {NAMESPACE_NAME_LABEL: p.namespace}.items())]
    return _selected(chosen, None, peer.get("podSelector", {}))


def _short(selector: Mapping[str, Any]) -> str:
    """`shortLabelSelectorString` of a selector with matchLabels only."""
    labels = "".join(f"{k}: {v}," for k, v in sorted(dict(selector.get("matchLabels", {})).items()))
    return f"LS{{ML:{{{labels}}},}}"


def _l4(ports: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """`getL4Match` per protocol (`pkg/libovsdb/util/acl.go`): `tcp && tcp.dst==N`, several ports
    `tcp.dst=={N,M}`, a range `N<=tcp.dst<=M`, a port list beside ranges `tcp && (... || ...)`."""
    singles: dict[str, list[str]] = {}
    ranges: dict[str, list[str]] = {}
    for port in ports:
        protocol = str(port.get("protocol", "TCP")).lower()
        singles.setdefault(protocol, [])
        ranges.setdefault(protocol, [])
        if "port" not in port:
            continue
        end = port.get("endPort")
        if end:
            ranges[protocol].append(f"{port['port']}<={protocol}.dst<={end}")
        else:
            singles[protocol].append(str(port["port"]))
    out = {}
    for protocol, listed in singles.items():
        terms = ([f"{protocol}.dst=={listed[0]}" if len(listed) == 1 else f"{protocol}.dst=={{{','.join(listed)}}}"]
                 if listed else []) + ranges[protocol]
        out[protocol] = (protocol if not terms else f"{protocol} && {terms[0]}" if len(terms) == 1
                         else f"{protocol} && ({' || '.join(terms)})")
    return out


def _block(peer: Mapping[str, Any], *, combined: bool) -> str:
    """`getMatchFromIPBlock` of one ipBlock: in parentheses where it has an `except` and the
    blocks are combined (v1.3.0)."""
    block = peer["ipBlock"]
    match = f"ip4.src == {block['cidr']}"
    if block.get("except"):
        match += f" && ip4.src != {{{', '.join(block['except'])}}}"
        return f"({match})" if combined else match
    return match


def combines_ip_blocks(version: str) -> bool:
    """From v1.3.0 a rule's ipBlocks are one ACL (commit fd2701582)."""
    return ovn_kubernetes_release(version) >= (1, 3, 0)


def _ids(owner_type: str, key: str, **more: str) -> dict[str, str]:
    return {"k8s.ovn.org/owner-controller": CONTROLLER, "k8s.ovn.org/owner-type": owner_type,
            "k8s.ovn.org/id": f"{CONTROLLER}:{owner_type}:{key}", **more}


def _addresses(members: Sequence[str]) -> str:
    """An Address_Set's `addresses` in ovn-nbctl's syntax: a set of quoted strings, one per address
    (one string holding them all, space-separated, matches none of them)."""
    return f"[{','.join(json.dumps(m) for m in members)}]"


def _anp_pods(pods: Sequence[Pod], selector: Mapping[str, Any]) -> list[Pod]:
    """The pods an AdminNetworkPolicy subject or peer (`{"pods": ...}` or `{"namespaces": ...}`)
    selects: a NetworkPolicy peer whose namespaceSelector is always given (`{}`: every namespace)."""
    peer = selector["pods"] if "pods" in selector else {"namespaceSelector": selector["namespaces"]}
    return _peer_pods(pods, "", {"namespaceSelector": {}, **peer})


def _anp_port(port: Mapping[str, Any]) -> dict[str, Any]:
    """An AdminNetworkPolicy port in a NetworkPolicy port's form, for `_l4`."""
    if "portNumber" in port:
        return {"protocol": port["portNumber"].get("protocol", "TCP"), "port": port["portNumber"]["port"]}
    ranged = port["portRange"]
    return {"protocol": ranged.get("protocol", "TCP"), "port": ranged["start"], "endPort": ranged["end"]}


class Rows:
    """The rows of one cluster's NetworkPolicies and AdminNetworkPolicies, built up as ovn-nbctl
    commands."""

    def __init__(self, pods: Sequence[Pod], *, tiers: bool, version: str = OVN_KUBERNETES_VERSION) -> None:
        self.pods, self.tiers, self.combined = pods, tiers, combines_ip_blocks(version)
        self.commands: list[list[str]] = []
        self.acls: list[Acl] = []
        self._groups: dict[str, tuple[list[str], Mapping[str, str]]] = {}  # name -> its ports, external_ids

    def _group(self, name: str, ports: Sequence[str], ids: Mapping[str, str]) -> None:
        have = self._groups.setdefault(name, ([], ids))[0]
        have += [port for port in ports if port not in have]

    def groups(self) -> list[list[str]]:
        """The port groups, each with its ports (before the ACLs that are added to them)."""
        return [command for name, (ports, ids) in self._groups.items()
                for command in (["pg-add", name, *ports],
                                ["set", "Port_Group", name, *nb_rows.pairs("external_ids", ids)])]

    def _acl(self, group: str, acl: Acl, ids: Mapping[str, str], options: Mapping[str, str] | None = None,
             name: str | None = None, tier: int = TIER) -> None:
        self.commands += nb_rows.acl("Port_Group", group, acl.direction, acl.priority, acl.match, acl.action,
                                     tier=tier if self.tiers else None, external_ids=ids, options=options,
                                     name=name[:63] if name is not None else None)
        self.acls.append(acl)

    def default_deny(self, namespace: str, direction: str, pods: Sequence[str]) -> None:
        ingress = direction == "Ingress"
        name = hash_for_ovn(f"{CONTROLLER}:NetpolNamespace:{namespace}:{direction}")
        first = name not in self._groups
        self._group(name, pods, _ids("NetpolNamespace", f"{namespace}:{direction}", **{
            "k8s.ovn.org/name": namespace, "direction": direction}))
        if not first:
            return
        port, way = ("outport", "to-lport") if ingress else ("inport", "from-lport")
        options = None if ingress else {"apply-after-lb": "true"}
        owner = f"OVN-Kubernetes default deny of namespace {namespace} ({direction})"
        for kind, match, action, priority in (("defaultDeny", f"{port} == @{name}", "drop", DENY_PRIORITY),
                                              ("arpAllow", f"{port} == @{name} && (arp || nd)", "allow",
                                               ALLOW_PRIORITY)):
            self._acl(name, Acl(way, priority, match, action, owner),
                      _ids("NetpolNamespace", f"{namespace}:{direction}:{kind}", **{
                          "k8s.ovn.org/name": namespace, "direction": direction, "type": kind}), options,
                      f"NP:{namespace}:{direction}")

    def policy(self, obj: Mapping[str, Any]) -> None:
        namespace, name = str(obj["metadata"]["namespace"]), str(obj["metadata"]["name"])
        spec = obj.get("spec", {})
        selected = [p.port for p in _selected(self.pods, namespace, spec.get("podSelector", {}))]
        types = spec.get("policyTypes") or ["Ingress"]
        for direction in ("Ingress", "Egress"):
            self.default_deny(namespace, direction, selected if direction in types else [])
        group = hash_for_ovn(f"{CONTROLLER}:NetworkPolicy:{namespace}:{name}")
        self._group(group, selected, _ids("NetworkPolicy", f"{namespace}:{name}",
                                          **{"k8s.ovn.org/name": f"{namespace}:{name}"}))
        owner = f"OVN-Kubernetes NetworkPolicy {namespace}/{name}"
        for index, rule in enumerate(spec.get("ingress", [])):
            peers = rule.get("from", [])
            blocks = [_block(p, combined=self.combined) for p in peers if "ipBlock" in p]
            l3: list[tuple[int, str]] = list(enumerate(blocks))
            if self.combined and blocks:
                l3 = [(-2, blocks[0] if len(blocks) == 1 else f"({' || '.join(blocks)})")]
            selectors = [p for p in peers if "ipBlock" not in p]
            if selectors:
                addresses = self.address_set(namespace, selectors)
                l3.append((-1, f"ip4.src == {{${addresses}}}"))
            if not peers:
                l3.append((-1, "ip4"))
            for protocol, l4 in (_l4(rule.get("ports", [])) or {"None": ""}).items():
                for block, match in l3:
                    text = " && ".join(part for part in (match, l4, f"outport == @{group}") if part)
                    key = f"{namespace}:{name}:Ingress:{index}:{protocol}:{block}"
                    self._acl(group, Acl("to-lport", ALLOW_PRIORITY, text, "allow-related", owner),
                              _ids("NetworkPolicy", key, **{"k8s.ovn.org/name": f"{namespace}:{name}",
                                                            "direction": "Ingress", "gress-index": str(index),
                                                            "port-policy-protocol": protocol,
                                                            "ip-block-index": str(block)}),
                              name=f"NP:{namespace}:{name}:Ingress:{index}")

    def admin_policy(self, obj: Mapping[str, Any]) -> None:
        """An AdminNetworkPolicy's rows (ingress rules; pods and namespaces peers)."""
        if not self.tiers:
            return
        name, spec = str(obj["metadata"]["name"]), obj.get("spec", {})
        subject = spec.get("subject", {})
        chosen = _anp_pods(self.pods, subject)
        group = hash_for_ovn(f"{CONTROLLER}:AdminNetworkPolicy:{name}")
        self._group(group, [p.port for p in chosen], _ids("AdminNetworkPolicy", name, **{"k8s.ovn.org/name": name}))
        owner = f"OVN-Kubernetes AdminNetworkPolicy {name}"
        for index, rule in enumerate(spec.get("ingress", [])):
            key = f"{name}:Ingress:{index}"
            peers = sorted({p.address for peer in rule.get("from", []) for p in _anp_pods(self.pods, peer)})
            addresses = hash_for_ovn(f"{CONTROLLER}:AdminNetworkPolicy:{key}:v4")
            self.commands.append(["create", "Address_Set", f"name={addresses}",
                                  f"addresses={_addresses(peers)}",
                                  *nb_rows.pairs("external_ids", _ids("AdminNetworkPolicy", f"{key}:v4", **{
                                      "k8s.ovn.org/name": name, "direction": "Ingress",
                                      "gress-index": str(index), "ip-family": "v4"}))])
            priority = ANP_FLOW_START - ANP_RULES_MAX * int(spec["priority"]) - index
            l3 = f"outport == @{group} && ((ip4.src == ${addresses}))"
            ports = [_anp_port(p) for p in rule.get("ports", [])]
            for protocol, l4 in (_l4(ports) or {"None": ""}).items():
                self._acl(group, Acl("to-lport", priority, " && ".join(x for x in (l3, l4) if x),
                                     ANP_ACTIONS[str(rule["action"])], owner),
                          _ids("AdminNetworkPolicy", f"{key}:{protocol}", **{
                              "k8s.ovn.org/name": name, "direction": "Ingress", "gress-index": str(index),
                              "port-policy-protocol": protocol}),
                          name=f"ANP:{name}:Ingress:{index}", tier=ANP_TIER)

    def address_set(self, namespace: str, peers: Sequence[Mapping[str, Any]]) -> str:
        """The Address_Set of the pods the rule's selector peers select (one, in the lab)."""
        peer = peers[0]
        spaces = peer.get("namespaceSelector")
        key = f"{_short(spaces) if spaces is not None else namespace}_{_short(peer.get('podSelector', {}))}"
        name = hash_for_ovn(f"{CONTROLLER}:PodSelector:{key}:v4")
        members = sorted({p.address for q in peers for p in _peer_pods(self.pods, namespace, q)})
        self.commands.append(["create", "Address_Set", f"name={name}",
                              f"addresses={_addresses(members)}",
                              *nb_rows.pairs("external_ids", _ids("PodSelector", f"{key}:v4", **{
                                  "k8s.ovn.org/name": key, "ip-family": "v4"}))])
        return name


def commands(policies: Sequence[Mapping[str, Any]], pods: Sequence[Pod], *, tiers: bool,
             version: str = OVN_KUBERNETES_VERSION) -> tuple[list[Acl], list[list[str]]]:
    """The rows of a cluster's rendered NetworkPolicies and AdminNetworkPolicies over the lab's pods
    (one transaction), as OVN-Kubernetes `version` writes them."""
    rows = Rows(pods, tiers=tiers, version=version)
    for obj in policies:
        if obj.get("kind") == "AdminNetworkPolicy":
            rows.admin_policy(obj)
        else:
            rows.policy(obj)
    return rows.acls, rows.groups() + rows.commands
