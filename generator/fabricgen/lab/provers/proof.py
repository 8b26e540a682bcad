"""A fabric's rendered output in a throwaway OVN-IC lab, and every path between AZs proven.

`prove` builds the lab (`assembly`), proves every ordered pair of endpoints in different AZs
(a zone's backbone, a deployment's advertised range) with ovn-trace (`tracing`) or with
packets between simulated chassis (`dataplane`), stops the lab, and returns the `Proof`: the
AZs as the lab built them and each pair's outcome (`paths`), and the policy's connections, each
with the verdict the policy expects and the one OVN gave (`policy_flows`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from ipaddress import IPv4Address, IPv4Network

from fabricgen.lab.assembly import ProofError, running
from fabricgen.lab.ovn.programs import Programs, zones_ovn
from fabricgen.lab.ovn.running import SandboxError
from fabricgen.lab.platforms.kubeovn import Backbone
from fabricgen.lab.provers.matches import MatchVerdict
from fabricgen.lab.provers.matches import judge as judge_matches
from fabricgen.lab.provers.member_flows import prove_member_flows
from fabricgen.lab.provers.paths import DENIED, Endpoint, Pair
from fabricgen.lab.provers.policy_flows import DENY, Flow, expected, prove_flows
from fabricgen.lab.provers.tracing import trace_pairs
from fabricgen.lab.underlay.stage import UnderlayProof
from fabricgen.observe.icsb_show import IcSbShow
from fabricgen.pipeline import Build


@dataclass(frozen=True)
class Az:
    """One availability zone of the lab as it was built."""

    name: str
    kind: str  # "zone" or "deployment"
    transit_address: IPv4Address
    fabric_address: IPv4Address | None  # what the fabric says (None: not known yet)
    mac: str
    source: str = "fabric"  # where the lab's address came from: fabric, actual (--actual) or lab (picked)

    @property
    def stale(self) -> bool:
        """The live transit switch (`--actual`) has another address than the fabric."""
        return self.source == "actual" and self.fabric_address != self.transit_address

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "kind": self.kind, "transitAddress": str(self.transit_address),
                "fabricAddress": str(self.fabric_address) if self.fabric_address else None,
                "source": self.source, "stale": self.stale}


@dataclass(frozen=True)
class Proof:
    transit_switch: str
    transit_subnet: IPv4Network
    azs: tuple[Az, ...]
    endpoints: tuple[Endpoint, ...]
    pairs: tuple[Pair, ...]
    data_plane: bool = False  # packets between simulated chassis; else ovn-trace only
    ovn_version: str = ""  # of the programs that proved it
    ovs_version: str = ""
    expected_ovn: tuple[tuple[str, str], ...] = ()  # (who, OVN release) the AZs run, where the fabric says
    # Kube-OVN's further transit switches (TS_NUM > 1), every zone's port on each published,
    # bound in every other zone and keyed alike before any pair was sent
    extra_switches: tuple[str, ...] = ()
    flows: tuple[Flow, ...] = ()  # the policy's connections, each with its expected and observed verdict
    matches: tuple[MatchVerdict, ...] = ()  # every rendered match, judged by OVN's own parser
    underlay: UnderlayProof | None = None  # the hosts' rendered files on a kernel underlay; None: not run

    @property
    def delivered(self) -> int:
        return sum(p.delivered for p in self.pairs)

    @property
    def denied(self) -> int:
        """Pairs not delivered where the policy denies them (`paths.DENIED`)."""
        return sum(p.outcome == DENIED for p in self.pairs)

    @property
    def ok(self) -> bool:
        return (all(p.as_it_should for p in self.pairs) and all(f.ok for f in self.flows)
                and all(m.refused is None for m in self.matches) and (self.underlay is None or self.underlay.ok))

    def pair(self, source: Endpoint, target: Endpoint) -> Pair | None:
        return self._by_ends.get((source, target))

    @functools.cached_property
    def _by_ends(self) -> dict[tuple[Endpoint, Endpoint], Pair]:
        """The pairs by (source, target): the matrix looks up every cell, n² of them."""
        return {(p.source, p.target): p for p in self.pairs}


def prove(build: Build, actual: Mapping[str, IPv4Address] | None = None, *, data_plane: bool = False,
          programs: Programs | None = None) -> Proof:
    """Build the lab, prove every ordered pair of endpoints in different AZs, stop the lab: with
    ovn-trace, or with `data_plane` with packets between simulated chassis (see `dataplane`).
    Without an interconnection there is nothing to prove and no lab is started."""
    if build.plan.fabric.interconnection is None:
        return Proof("", IPv4Network("0.0.0.0/32"), (), (), (), data_plane)
    programs = programs or Programs.from_environment()
    try:
        return replace(_prove(build, actual, data_plane, programs), matches=judge_matches(build, programs))
    except SandboxError as exc:
        raise ProofError(f"the OVN lab failed: {exc}") from None


def _prove(build: Build, actual: Mapping[str, IPv4Address] | None, data_plane: bool, programs: Programs) -> Proof:
    with running(build, actual, data_plane=data_plane, programs=programs, final=not data_plane) as lab:
        endpoints = lab.endpoints()
        if data_plane:
            from fabricgen.lab.provers import dataplane

            pairs = dataplane.prove_pairs(lab, endpoints)
        else:
            pairs = trace_pairs(lab, endpoints)
        guarded = {vm.vm for found in lab.members.values() for vm in found.vms.values()}
        pairs = denied_by_policy(build, endpoints, pairs, guarded)
        flows = (*prove_flows(lab), *prove_member_flows(lab))
        azs = tuple(Az(z.spec.name, "zone", z.spec.transit_address, z.fabric_address, lab.macs[z.spec.name],
                       z.source) for z in lab.zones)
        azs += tuple(Az(j.az, "deployment", j.network.ip, j.network.ip, j.mac) for j in lab.joins)
    ic = build.plan.interconnection
    ovn, ovs = programs.versions()
    return Proof(ic.transit_switch.name, ic.transit_switch.subnet, azs, tuple(e for e, _ in endpoints), pairs,
                 data_plane, ovn, ovs, expected_ovn(build), lab.sandbox.extra_switches, flows)


def denied_by_policy(build: Build, endpoints: Sequence[tuple[Endpoint, Backbone]], pairs: Sequence[Pair],
                     guarded: set[str]) -> tuple[Pair, ...]:
    """The pairs, each that was not delivered to a VM the lab made a policy member (`guarded`: a
    zone's backbone in a group) where the policy admits no ICMP from its source, marked DENIED: as
    the policy says. A VM that is only inside a group's range by address (a deployment's own VM in
    a cluster's pod range) is no member, and its pair keeps its verdict. Whether the policy is
    enforced is for its flows to show; a pair the policy denies but the lab delivered stays
    delivered."""
    vms = {e: vm for e, vm in endpoints}
    out = []
    for pair in pairs:
        target = vms[pair.target]
        if not pair.delivered and target.vm in guarded and \
                expected(build.plan.policy, vms[pair.source].vm_ip, target.vm_ip, "icmp", None) == DENY:
            pair = Pair(pair.source, pair.target, DENIED, f"the policy admits no ICMP from {pair.source.cidr} into "
                                                          f"{pair.target.cidr}; not delivered ({pair.outcome}: "
                                                          f"{pair.detail})")
        out.append(pair)
    return tuple(out)


def expected_ovn(build: Build) -> tuple[tuple[str, str], ...]:
    """The OVN releases the AZs run, as far as the fabric says: the zones' from
    `interconnection.kubeOvnVersion` (or the IC image's tag), each deployment's `ovnVersion`."""
    out = []
    ic = build.plan.fabric.interconnection
    release = ic.kube_ovn_release if ic is not None else None
    zones = zones_ovn(release)
    if build.plan.zones and zones is not None and release is not None:
        out.append((f"the zones (Kube-OVN {release[0]}.{release[1]})", zones))
    for join in build.plan.joins:
        out.append((f"deployment {join.deployment.name}", join.deployment.ovn_version))
    return tuple(out)


def live_addresses(show: IcSbShow, transit_switch: str) -> dict[str, IPv4Address]:
    """Each AZ's address on the transit switch in an `ovn-ic-sbctl show` capture."""
    out = {}
    for az, port in show.ports_on(transit_switch).items():
        if port.ipv4 is not None:
            out[az] = port.ipv4.ip
    return out
