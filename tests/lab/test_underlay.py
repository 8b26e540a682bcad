"""verify's kernel underlay: the hosts' rendered nft files and frr.conf, run in network namespaces
with the real `nft` and FRR (zebra, bgpd), and every flow OVN needs between hosts sent through
the kernel. Each broken case is the rendered output with one thing changed, as a renderer bug
would change it; the kernel (its trace, its routes) names what failed."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from dataclasses import replace
from pathlib import Path, PurePosixPath

import pytest

from fabricgen.lab.underlay.hosts import hosts_of
from fabricgen.lab.underlay.needs import needs_of
from fabricgen.lab.underlay.stage import UnderlayProof, prove_underlay
from fabricgen.pipeline import Build, OutputFile, build
from support.fabrics import REPO, build_text, edit

pytestmark = pytest.mark.lab

OPENSTACK_K8S = REPO / "sites" / "openstack-k8s" / "fabric.yaml"
CLOUDSTACK = REPO / "sites" / "cloudstack" / "fabric.yaml"
NET1 = PurePosixPath("openstack-k8s/_host/openstack/chassis/net1")


def changed(head: Build, path: PurePosixPath, old: str, new: str) -> Build:
    """The build with one rendered file changed."""
    text = head.files[path].text
    assert old in text, text
    return replace(head, files={**head.files, path: OutputFile(text.replace(old, new))})


def proven(head: Build) -> UnderlayProof:
    result = prove_underlay(head)
    assert result is not None
    return result


def failing(result: UnderlayProof) -> list[tuple[str, str, str]]:
    return [(f.need.source, f.need.target, f.verdict) for f in result.flows if not f.ok]


def ours() -> list[str]:
    """This process's namespaces and FRR instances left behind."""
    mine = f"fgu{os.getpid()}-"
    left = [p.name for p in Path("/run/netns").glob(f"{mine}*")] if Path("/run/netns").is_dir() else []
    return left + [p.name for p in Path("/var/run/frr").glob(f"{mine}*")]


def test_the_sample_loads_its_firewall_and_every_host_flow_passes() -> None:
    """rendered/openstack-k8s: 11 hosts, the IC gateways' tunnels to each other through both
    firewalls, every BGP session up, and nothing of the lab left behind."""
    result = proven(build(OPENSTACK_K8S))
    assert result.ok, [f"{f.need.label}: {f.detail}" for f in result.flows if not f.ok]
    assert len(result.hosts) == 11 and result.refused == ()
    assert [s for s in result.sessions if s[2] != "Established"] == [] and len(result.sessions) == 8
    across = [f.need for f in result.flows if f.need.what == "geneve tunnel between AZs"]
    assert sorted((n.source, n.target) for n in across) == [
        ("k8s-node-1", "net1"), ("k8s-node-2", "net1"), ("net1", "k8s-node-1"), ("net1", "k8s-node-2")]
    assert {f.need.size for f in result.flows if f.need.protocol == "udp"} == {1500}
    assert ours() == []


def test_a_firewall_that_cuts_the_ic_gateways_fails_naming_host_table_and_rule() -> None:
    """The firewall as it was rendered before: net1 accepted Geneve only from cmp1. The kernel's
    trace names the rule that drops the other AZ's gateways."""
    head = changed(build(OPENSTACK_K8S), NET1 / "ovn-tunnel.nft",
                   "\t\tudp dport 6081 ip saddr { 10.255.1.1, 10.255.1.2 } accept\n", "")
    result = proven(head)
    assert not result.ok
    assert sorted(failing(result)) == [("k8s-node-1", "net1", "dropped"), ("k8s-node-2", "net1", "dropped")]
    detail = next(f.detail for f in result.flows if not f.ok)
    assert detail == "dropped by net1's table inet fabricgen_ovn_tunnel chain input rule `udp dport 6081 drop`"


def test_a_tunnel_endpoint_bgp_does_not_announce_has_no_route() -> None:
    head = changed(build(OPENSTACK_K8S), NET1 / "frr.conf", "  network 10.255.0.1/32\n", "")
    result = proven(head)
    assert {(s, v) for s, t, v in failing(result) if t == "net1"} == {
        ("cmp1", "no route"), ("k8s-node-1", "no route"), ("k8s-node-2", "no route")}
    assert all(t == "net1" or s == "net1" for s, t, _ in failing(result))


def test_what_nft_or_frr_refuses_is_named_with_its_file() -> None:
    head = changed(build(OPENSTACK_K8S), NET1 / "ovn-tunnel.nft", "udp dport 6081 drop", "udp dport 6081 dorp")
    head = changed(head, NET1 / "frr.conf", " neighbor FABRIC peer-group\n", " neighbor FABRIC peer-group\n bogus\n")
    result = proven(head)
    assert len(result.refused) == 2, result.refused
    assert result.refused[0].startswith(f"net1: {NET1}/frr.conf: FRR refused it: ") or \
        result.refused[1].startswith(f"net1: {NET1}/frr.conf: FRR refused it: ")
    assert any(r.startswith(f"net1: {NET1}/ovn-tunnel.nft: nft refused it: ") and "dorp" in r for r in result.refused)


def test_a_path_short_of_the_underlay_mtu_is_an_mtu_verdict() -> None:
    """The OpenStack deployment on jumbo frames, Kubernetes on 1500: a 9000-byte tunnel packet
    from net1 is lost on the way to the other AZ while a small one arrives."""
    neutron = "    underlayMTU: 1500              # 1442 for Neutron networks (path_mtu 1500 - 20 - 38)"
    text = edit(OPENSTACK_K8S.read_text(), neutron, "    underlayMTU: 9000")
    result = proven(build_text(text, "fabric.yaml"))
    assert sorted(failing(result)) == [("net1", "k8s-node-1", "mtu"), ("net1", "k8s-node-2", "mtu")]
    assert "a 9000-byte packet is lost" in next(f.detail for f in result.flows if not f.ok)


def test_controllers_take_clients_by_the_address_the_kernel_picks() -> None:
    """rendered/cloudstack: the KVM hosts reach the controller from their management address
    (10.0.0.0/24, a client network), not from their tunnel endpoint; the lab gives each host every
    address the fabric declares, with its prefix, and the kernel chooses the source."""
    head = build(CLOUDSTACK)
    hosts = {h.name: h for h in hosts_of(head)}
    assert [str(a) for a in hosts["kvm01"].addresses] == ["10.0.0.21/24", "10.250.0.21/20"]
    result = proven(head)
    assert result.ok, failing(result)
    assert {n.what for n in needs_of(head)} == {"geneve tunnel", "southbound", "northbound"}


def test_verify_reports_the_underlay_in_text_and_json_and_fails_on_it(tmp_path: Path) -> None:
    from fabricgen.cli import main

    site = tmp_path / "site"
    site.mkdir()
    (site / "fabric.yaml").write_text(CLOUDSTACK.read_text())
    fabric = site / "fabric.yaml"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["verify", str(fabric), "--format", "json"])
    doc = json.loads(buffer.getvalue())
    assert doc["kernelUnderlay"]["ok"] is True and doc["kernelUnderlay"]["hosts"] == ["kvm01", "kvm02", "kvm03",
                                                                                      "mgmt2"]
    # one deployment, no interconnection: the OVN paths are not proven, and JSON says so as the exit does
    assert code == 5 and doc["ok"] is False and doc["notProven"]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        main(["verify", str(fabric), "--no-underlay"])
    assert "kernel underlay" not in buffer.getvalue()
    assert re.search(r"^0/0 pairs delivered$", buffer.getvalue(), re.MULTILINE)


def test_where_the_underlay_cannot_run_verify_says_why_and_how_to_skip_it(tmp_path: Path) -> None:
    """Without iproute2, nft or vtysh on PATH, verify of a fabric with host output exits 6 naming
    them and `--no-underlay`, before it starts anything."""
    import subprocess
    import sys

    from fabricgen import exit_codes

    env = {**os.environ, "PATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "fabricgen", "verify", str(CLOUDSTACK)], capture_output=True,
                          text=True, env=env, check=False)
    assert done.returncode == exit_codes.NO_LAB, done.stderr
    assert "cannot here: these are missing: ip, nft, vtysh" in done.stderr, done.stderr
    assert "or pass --no-underlay" in done.stderr and "Traceback" not in done.stderr
