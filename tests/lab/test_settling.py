"""When a wave of the data-plane proof may end: the daemons' counters, read the way
openvswitch/ovs `lib/netdev-dummy.c` keeps them (`rx_packets` counted when the datapath takes a
packet from the port's queue, `tx_packets` when it hands one to the port's stream)."""

from __future__ import annotations

import pytest

from fabricgen.lab.assembly import ProofError
from fabricgen.lab.ovn import chassis
from fabricgen.lab.ovn.programs import Programs
from fabricgen.lab.ovn.settling import HOPS, Counts, Settling, read_counts
from fabricgen.lab.provers import dataplane, proof
from support.fabrics import REPO, build_file

# `ovs-appctl dpctl/show -s` of a chassis as ovs-vswitchd 3.1 prints it (trimmed to two ports)
DPCTL = """\
system@ovs-system:
  lookups: hit:28 missed:9 lost:0
  flows: 9
  port 0: ovs-system (dummy-internal)
    RX packets:0 errors:? dropped:? overruns:? frame:?
    TX packets:0 errors:? dropped:? aborted:? carrier:?
    collisions:?
    RX bytes:0  TX bytes:0
  port 101: br-phys_n1
    RX packets:21 errors:? dropped:? overruns:? frame:?
    TX packets:19 errors:? dropped:? aborted:? carrier:?
    collisions:?
    RX bytes:2436 (2.4 KiB)  TX bytes:2204 (2.2 KiB)
  port 4789: vxlan_sys_4789 (vxlan: packet_type=ptap)
    RX packets:0 errors:? dropped:? overruns:? frame:?
    TX packets:3 errors:? dropped:? aborted:? carrier:?
"""

A, B = ("a", "br-phys_n1"), ("main", "c0")
VIF = ("a", "vm1")
LINKS = [(A, B), (B, A)]


def counts(vif: int, a_tx: int, a_rx: int, main_tx: int, main_rx: int) -> Counts:
    return {VIF: (vif, 0), A: (a_rx, a_tx), B: (main_rx, main_tx)}


def test_counters_are_read_per_port_from_dpctl_show() -> None:
    assert read_counts("a", DPCTL) == {("a", "ovs-system"): (0, 0), ("a", "br-phys_n1"): (21, 19),
                                       ("a", "vxlan_sys_4789"): (0, 3)}


def test_a_wave_settles_one_round_per_hop_after_its_packets_left_their_queue() -> None:
    settling = Settling(LINKS, {VIF: 2})
    assert not settling.add(counts(0, 0, 0, 0, 0))
    assert settling.behind == ["vm1 of a: 0 of 2 injected packets taken"]
    rounds = [settling.add(counts(2, 2, 0, 0, 2)) for _ in range(HOPS + 1)]
    assert rounds == [False] * HOPS + [True]
    assert settling.behind == []


def test_a_packet_sent_and_not_yet_taken_holds_the_wave_and_starts_the_count_again() -> None:
    settling = Settling(LINKS, {VIF: 1})
    for _ in range(HOPS):
        assert not settling.add(counts(1, 1, 0, 0, 1))
    assert not settling.add(counts(1, 1, 0, 5, 1))  # the underlay sends 5 on to `a`
    assert not settling.add(counts(1, 1, 3, 5, 1))  # `a` has taken 3 of them
    assert settling.behind == ["main -> a: 2 sent, not yet taken"]
    rounds = [settling.add(counts(1, 1, 5, 5, 1)) for _ in range(HOPS + 1)]
    assert rounds == [False] * HOPS + [True]


def test_background_traffic_that_keeps_arriving_never_stalls_the_wave() -> None:
    """BFD sends on every tunnel each second: counters always move, yet each round the receiver has
    taken what was sent by the round before."""
    settling = Settling(LINKS, {VIF: 1})
    results = [settling.add(counts(1, 10 + n, 10 + n, 10 + n, 10 + n)) for n in range(HOPS + 2)]
    assert results[-1] and not any(results[:-1])


@pytest.mark.lab
@pytest.mark.skipif(bool(Programs().missing(data_plane=True)), reason="OVN programs missing (scripts/setup.sh --test)")
def test_a_lab_that_never_settles_is_an_error_of_the_lab_never_a_lost_packet(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream that dropped what it was sent (its queue full) never balances: verify gives up
    saying the lab could not settle, which the CLI turns into exit 6, not a pair `lost`."""
    real_links = chassis.Underlay.links

    def links(self: chassis.Underlay) -> list[tuple[tuple[str, str], tuple[str, str]]]:
        # the underlay's port to the first chassis also sending into a port that takes nothing:
        # what packets dropped on a stream look like
        real = real_links(self)
        return [*real, (real[1][0], (chassis.UNDERLAY, "nowhere"))]

    monkeypatch.setattr(chassis.Underlay, "links", links)
    monkeypatch.setattr(dataplane, "WAVE_POLLS", 30)
    build = build_file(REPO / "sites" / "lab" / "fabric.yaml")
    with pytest.raises(ProofError, match=r"could not settle in 30 rounds.*main -> main: [0-9]+ sent, not yet taken"):
        proof.prove(build, data_plane=True)
