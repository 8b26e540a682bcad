"""Every match fabricgen renders, judged by OVN's own parser before the lab proves anything: the
Kube-OVN Subnets' ACLs (raw, and the policy's) and the Vpcs' policy routes. A match OVN refuses
is an ACL or a route ovn-northd skips, so a verify that proved the rest would prove a fabric
that does not exist: each refusal fails it, naming the object and OVN's words.

A match may name address sets (`$name`) and port groups (`@name`) that Kube-OVN or an operator
creates in the live NB; the lab declares each one it names (an address set empty: OVN takes an
empty set beside any field), so what OVN judges is the match itself, not which sets exist live."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fabricgen.lab.ovn import matches
from fabricgen.lab.ovn.programs import Programs
from fabricgen.model import acl_match
from fabricgen.pipeline import Build


@dataclass(frozen=True)
class MatchVerdict:
    where: str  # `zone hq Subnet prod-db acls[0]`, `zone hq Vpc ovn-cluster policyRoutes[2]`
    match: str
    refused: str | None  # OVN's words, None where it parses

    def as_dict(self) -> dict[str, Any]:
        return {"where": self.where, "match": self.match, "ok": self.refused is None,
                **({"refused": self.refused} if self.refused is not None else {})}


def rendered(build: Build) -> list[tuple[str, str]]:
    """(where, match) of every rendered match."""
    out: list[tuple[str, str]] = []
    for zone in build.plan.fabric.zones:
        for obj in build.objects_within(zone.name):
            kind, name = obj.get("kind"), obj.get("metadata", {}).get("name")
            spec = obj.get("spec") or {}
            if obj.get("apiVersion") != "kubeovn.io/v1":
                continue
            items = spec.get("acls") if kind == "Subnet" else spec.get("policyRoutes") if kind == "Vpc" else None
            key = "acls" if kind == "Subnet" else "policyRoutes"
            for index, item in enumerate(items or []):
                if isinstance(item, dict) and isinstance(item.get("match"), str):
                    out.append((f"zone {zone.name} {kind} {name} {key}[{index}]", item["match"]))
    return out


def judge(build: Build, programs: Programs) -> tuple[MatchVerdict, ...]:
    found = rendered(build)
    if not found:
        return ()
    named = [acl_match.references(match) for _where, match in found]
    sets: dict[str, list[str]] = {name: [] for named_sets, _groups in named for name in named_sets}
    groups = {name for _sets, named_groups in named for name in named_groups}
    verdicts = matches.judge([m for _w, m in found], address_sets=sets, port_groups=groups, programs=programs)
    return tuple(MatchVerdict(where, match, verdicts.of(match)) for where, match in found)
