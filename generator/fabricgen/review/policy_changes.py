"""Policy changes as a reviewer reads them: which flows a change allows or stops allowing, which
groups it opens or widens, and where applying it leaves traffic unfiltered for a moment."""

from __future__ import annotations

from ipaddress import IPv4Network

from fabricgen.pipeline import Build
from fabricgen.plan.policy import merged_ports

Note = tuple[tuple[str, ...], str]  # the zones it concerns (none: the text names them), the text


Ports = list[tuple[int, int]]
EVERY_PORT: Ports = [(1, 65535)]
Allowed = dict[tuple[str, str, str], Ports]  # (source, target, protocol): the ports, merged


def _allowed(build: Build | None) -> Allowed:
    """What the rules allow, per source, target and protocol: the ports merged (a rule without
    ports, ICMP and `any`: every port), so that a change is compared port by port, not rule text
    by rule text."""
    out: Allowed = {}
    if build is None:
        return out
    for r in build.plan.policy.rules:
        out.setdefault((r.source, r.target, r.protocol), []).extend(
            list(r.ports) if r.ports and r.protocol not in ("any", "icmp") else EVERY_PORT)
    return {key: merged_ports(ports) for key, ports in out.items()}


def _minus(ports: Ports, taken: Ports) -> Ports:
    """The ports of `ports` that `taken` (merged) does not hold."""
    out: Ports = []
    for a, b in ports:
        for c, d in taken:
            if d < a or c > b:
                continue
            if c > a:
                out.append((a, c - 1))
            a = d + 1
            if a > b:
                break
        if a <= b:
            out.append((a, b))
    return out


def _covered(allowed: Allowed, key: tuple[str, str, str]) -> Ports:
    """What `allowed` opens for one source, target and protocol, `any` included."""
    source, target, _protocol = key
    return EVERY_PORT if (source, target, "any") in allowed else allowed.get(key, [])


def _changes(old: Allowed, new: Allowed) -> list[tuple[str, str]]:
    """(flow text, target) of what `new` allows that `old` did not."""
    out = []
    for key, ports in new.items():
        more = _minus(ports, _covered(old, key))
        if more:
            source, target, protocol = key
            what = protocol if more == EVERY_PORT or protocol in ("any", "icmp") else \
                f"{protocol}/" + ",".join(str(a) if a == b else f"{a}-{b}" for a, b in more)
            out.append((f"{source} → {target} {what}", target))
    return out


def _reach(build: Build | None) -> dict[str, tuple[list[IPv4Network], set[str]]]:
    """Per group, the ranges its members cover and the pods it selects that have no range."""
    if build is None:
        return {}
    out: dict[str, tuple[list[IPv4Network], set[str]]] = {}
    for group, members in build.plan.policy.groups.items():
        ranges = [e.cidr for e in members if e.cidr is not None]
        pods = {f"pods {e.cluster}/{e.namespace} {dict(e.pod_selector)}" for e in members if e.cidr is None}
        out[group] = (ranges, pods)
    return out


def _wider(old: tuple[list[IPv4Network], set[str]], new: tuple[list[IPv4Network], set[str]]) -> list[str]:
    """What `new` reaches that `old` did not: ranges outside every old range, pods newly selected."""
    ranges = [str(n) for n in new[0] if not any(n.subnet_of(o) for o in old[0])]
    return ranges + sorted(new[1] - old[1])


def _kube_ovn_subnets(build: Build | None) -> dict[tuple[str, str], object]:
    """The ACLs fabricgen renders on each Kube-OVN Subnet, by (zone, Subnet name)."""
    if build is None:
        return {}
    found: dict[tuple[str, str], object] = {}
    for directory in build.manifests:
        for obj in build.objects(directory):
            if obj["kind"] == "Subnet" and "acls" in obj.get("spec", {}):
                found[(directory.split("/")[0], obj["metadata"]["name"])] = obj["spec"]["acls"]
    return found


def _playbooks(build: Build | None) -> dict[str, str]:
    """The Neutron security-group playbooks of a build, by path."""
    if build is None:
        return {}
    return {str(path): out.text for path, out in build.files.items() if path.name == "security-groups.yml"}


def policy_notes(base: Build | None, head: Build) -> list[Note]:
    notes: list[Note] = []
    old_protected = base.plan.policy.protected if base is not None else frozenset()
    opened = sorted(old_protected - head.plan.policy.protected)
    if opened:
        them = "it" if len(opened) == 1 else "them"
        notes.append(((), f"policy: {', '.join(opened)} {'loses' if len(opened) == 1 else 'lose'} defaultDeny: "
                       f"everything reaches {them} once this syncs"))
    before, after = _allowed(base), _allowed(head)
    added = [text for text, _target in _changes(before, after)]
    # a flow into a group that is open now is not lost: everything reaches that group
    removed = [text for text, target in _changes(after, before) if target in head.plan.policy.protected]
    if added:
        notes.append(((), "policy: now allowed: " + "; ".join(added)))
    if removed:
        notes.append(((), "policy: no longer allowed: " + "; ".join(removed) + ": connections that use "
                       f"{'it' if len(removed) == 1 else 'them'} are dropped once this syncs"))
    old_reach, new_reach = _reach(base), _reach(head)
    wider = [f"{g} (+{', '.join(more)})" for g in new_reach if g in old_reach
             if (more := _wider(old_reach[g], new_reach[g]))]
    if wider:
        notes.append(((), "policy: groups widen, and every rule from them reaches further: " + "; ".join(wider)))
    old_acls, new_acls = _kube_ovn_subnets(base), _kube_ovn_subnets(head)
    touched = sorted(k for k in old_acls.keys() | new_acls.keys() if old_acls.get(k) != new_acls.get(k))
    if touched and base is not None:
        notes.append((tuple(dict.fromkeys(z for z, _ in touched)), (
            f"the acls of Subnet{'s' if len(touched) > 1 else ''} " + ", ".join(f"{z}/{s}" for z, s in touched)
            + f" change{'' if len(touched) > 1 else 's'}: Kube-OVN deletes every "
            "ACL of a subnet's switch, then writes the new ones in a second transaction (kubeovn/kube-ovn "
            "pkg/controller/subnet.go handleAddOrUpdateSubnet), so traffic into them is unfiltered for a moment "
            "while this syncs; sync in a quiet window")))
    old_books, new_books = _playbooks(base), _playbooks(head)
    changed = sorted(p for p in old_books.keys() & new_books.keys() if old_books[p] != new_books[p])
    if changed:
        notes.append(((), "the security groups of " + ", ".join(changed) + " change: openstack.cloud.security_group "
                       "deletes each changed rule before it creates the new one (rules cannot be updated: "
                       "plugins/modules/security_group.py), so those rules are missing for a moment while it runs"))
    return notes
