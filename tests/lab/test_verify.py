"""`fabricgen verify` against real OVN (the Debian OVN 23.03 packages).

The lab (`fabricgen.lab`) is built from the rendered objects and scripts; these tests
check that every sample is delivered, and that a lab built from broken output (a
stale transit address from `--actual`, a route or an allow policy removed, a next hop
pointing at another zone) fails and names the pairs and where their packets went.
Ctrl-C and SIGTERM stop every daemon and remove the lab directory.
"""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from ipaddress import IPv4Address
from pathlib import Path
from typing import Any

import pytest

from fabricgen import exit_codes
from fabricgen.lab import assembly
from fabricgen.lab.ovn.sandbox import INSTALL_COMMAND, missing_prerequisites
from fabricgen.lab.platforms import kubeovn
from fabricgen.lab.provers import paths, proof, tracing
from fabricgen.observe import icsb_show
from fabricgen.pipeline import Build
from support.fabrics import REPO, SITES, auto_route_fabric, build_file, build_text, rel, zones_fabric

pytestmark = pytest.mark.lab  # starts real programs: ovn-ic, ovn-ic-nbctl, ovn-ic-sbctl, ovn-nbctl, ovn-northd...

_MISSING = missing_prerequisites()
needs_ovn = pytest.mark.skipif(
    bool(_MISSING), reason=f"real OVN needed ({INSTALL_COMMAND}); missing: {', '.join(_MISSING)}")

LAB = REPO / "sites" / "lab" / "fabric.yaml"


def fabricgen(*args: str, env: dict[str, str] | None = None, stdin: str | None = None
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabricgen", *args], capture_output=True, text=True, cwd=REPO,
                          env=env, input=stdin, check=False)


def with_vpc_spec(build: Build, zone: str, edit: Any) -> Build:
    """The build with `edit(spec)` applied to a copy of zone's rendered Vpc `ovn-cluster` spec."""
    manifests = {}
    for directory, items in build.manifests.items():
        new_items = []
        for manifest in items:
            objects = []
            for obj in manifest.objects:
                if directory == zone and obj["kind"] == "Vpc" and obj["metadata"]["name"] == "ovn-cluster":
                    obj = copy.deepcopy(obj)
                    edit(obj["spec"])
                objects.append(obj)
            new_items.append(replace(manifest, objects=tuple(objects)))
        manifests[directory] = tuple(new_items)
    return replace(build, manifests=manifests)


def failing(result: proof.Proof) -> dict[tuple[str, str], paths.Pair]:
    return {(p.source.az, p.target.az): p for p in result.pairs if not p.delivered}


# ---------------------------------------------------------------- every sample
@needs_ovn
@pytest.mark.parametrize("site", SITES, ids=[s.parent.name for s in SITES])
def test_every_sample_is_delivered(site: Path) -> None:
    """Every pair of every sample is delivered; a sample with no pair to prove says what it did not
    prove, and fails where something exists to prove (a shared OVN deployment, several zones)."""
    result = fabricgen("verify", "--logical", rel(site))
    build = build_file(site)
    proven = proof.prove(build)
    total, flows = len(proven.pairs), len(proven.flows)
    last = result.stdout.splitlines()[-1]
    if build.plan.fabric.ovn_deployments:  # the hosts' rendered files ran on the kernel underlay
        assert re.fullmatch(rf"{total}/{total} pairs delivered; (\d+)/\1 flows between hosts through the kernel "
                            "underlay", last), last
        assert "the hosts' rendered nft and frr.conf ran on a kernel underlay" in result.stdout
    else:
        assert last == f"{total}/{total} pairs delivered"
    judged = len(proven.matches)
    assert judged == 0 or f"{judged}/{judged} rendered matches parsed by OVN " in result.stdout
    if flows:
        assert result.stdout.splitlines()[-2] == f"{flows}/{flows} policy flows as the policy says"
    something = bool(build.plan.fabric.ovn_deployments) or len(build.plan.fabric.zones) > 1
    if total == 0 and something:
        assert result.returncode == exit_codes.UNREACHABLE, result.stdout + result.stderr
        assert "nothing was proven: 0 pairs of AZs" in result.stdout
    else:
        assert result.returncode == 0, result.stdout + result.stderr
        assert "nothing was proven" not in result.stdout
    if total and not build.plan.fabric.ovn_deployments:
        assert "the underlay between chassis is simulated as ideal" in result.stdout


@needs_ovn
def test_lab_matrix_and_json() -> None:
    text = fabricgen("verify", "--logical", "sites/lab/fabric.yaml")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == ("sites/lab/fabric.yaml: 4 AZ(s) on transit switch ts (169.254.100.0/24), "
                        "12 ordered pair(s) traced with ovn-trace")
    assert lines[1].startswith("proven with OVN ") and lines[1].endswith(
        ": ovn-trace of each pair, no chassis and no packets (--logical)")
    rows = lines[lines.index("") + 1:]
    assert rows[0].split() == ["from", "\\", "to", "hq", "ai", "edge", "dr"]
    assert rows[1].split() == ["hq", "-", "ok", "ok", "ok"]
    assert lines[-3:] == [f"19/19 rendered matches parsed by OVN {doc_version(lines)}",
                          "12/12 policy flows as the policy says", "12/12 pairs delivered"]

    doc = json.loads(fabricgen("verify", "--logical", "sites/lab/fabric.yaml", "--format", "json").stdout)
    assert doc["mode"] == "logical"
    assert (doc["delivered"], doc["total"], doc["ok"]) == (12, 12, True)
    assert [a["name"] for a in doc["azs"]] == ["hq", "ai", "edge", "dr"]
    assert doc["pairs"][0] == {"from": {"az": "hq", "cidr": "172.30.10.0/24"},
                               "to": {"az": "ai", "cidr": "172.30.20.0/24"}, "delivered": True,
                               "outcome": "delivered", "detail": "hq -> ts -> ai"}

    md = fabricgen("verify", "--logical", "sites/lab/fabric.yaml", "--format", "markdown").stdout
    assert md.startswith("### OVN-IC lab: 12/12 pairs delivered\n")
    assert "Policy: 12/12 policy flows as the policy says; " in md
    assert f"Matches: 19/19 rendered matches parsed by OVN {doc_version(lines)}.\n" in md
    assert len(doc["matches"]) == 19 and all(m["ok"] for m in doc["matches"])
    assert doc["matches"][0] == {"where": "zone hq Vpc ovn-cluster policyRoutes[0]",
                                 "match": "ip4.dst == 172.30.20.0/24", "ok": True}
    assert any(m["where"] == "zone hq Subnet prod-db acls[0]" for m in doc["matches"]), doc["matches"]


def doc_version(lines: list[str]) -> str:
    """The OVN release `proven with OVN X (...)` names."""
    return lines[1].split()[3]


RAW_ACL = ('          - name: legacy\n            cidr: 10.100.4.0/24\n            acls:\n'
           '              - {direction: from-lport, priority: 1, match: "%s", action: drop}\n')


@needs_ovn
def test_a_rendered_match_ovn_refuses_fails_verify(tmp_path: Path) -> None:
    """`flags.localnet` is a field of OVN 25.03 (fabricgen's parser takes it) that OVN 23.03 does not
    have: proven with 23.03, ovn-northd would skip the ACL, so verify fails and names it."""
    text = LAB.read_text().replace("          - {name: prod-web, cidr: 10.100.3.0/24}\n",
                                   "          - {name: prod-web, cidr: 10.100.3.0/24}\n"
                                   + RAW_ACL % "flags.localnet == 1 && ip4.src == $legacy_as", 1)
    fabric = tmp_path / "fabric.yaml"
    fabric.write_text(text, encoding="utf-8")
    env = {**os.environ, "PATH": "/usr/bin:/bin"}  # the distribution's OVN (23.03)
    result = fabricgen("verify", "--logical", str(fabric), env=env)
    lines = result.stdout.splitlines()
    if not lines[1].startswith("proven with OVN 23.03"):
        pytest.skip(f"needs the distribution's OVN 23.03: {lines[1]}")
    assert result.returncode == exit_codes.UNREACHABLE, result.stdout + result.stderr
    assert ("refused by OVN: zone hq Subnet legacy acls[0]: `flags.localnet == 1 && ip4.src == $legacy_as`: "
            "Syntax error at `flags.localnet' expecting field name.") in lines, result.stdout
    assert lines[-3] == "19/20 rendered matches parsed by OVN 23.03.1", lines[-3:]
    assert lines[-1] == "12/12 pairs delivered; 1 rendered match refused by OVN"
    md = fabricgen("verify", "--logical", str(fabric), "--format", "markdown", env=env).stdout
    assert md.startswith("### OVN-IC lab: 12/12 pairs delivered; 1 rendered match refused by OVN\n")
    assert ("- refused by OVN: zone hq Subnet legacy acls[0]: `flags.localnet == 1 && ip4.src == $legacy_as`: "
            "Syntax error at `flags.localnet' expecting field name.\n") in md
    doc = json.loads(fabricgen("verify", "--logical", str(fabric), "--format", "json", env=env).stdout)
    assert doc["ok"] is False
    assert [m for m in doc["matches"] if not m["ok"]] == [{
        "where": "zone hq Subnet legacy acls[0]", "match": "flags.localnet == 1 && ip4.src == $legacy_as",
        "ok": False, "refused": "Syntax error at `flags.localnet' expecting field name."}]
    assert "| from \\ to | hq | ai | edge | dr |" in md


@needs_ovn
def test_the_lab_runs_the_rendered_ic_database_script_and_joins_every_zone() -> None:
    with assembly.running(build_file(LAB)) as lab:
        sandbox = lab.sandbox
        assert sandbox.icnb("get", "IC_NB_Global", ".", "options").strip() == '{vxlan_mode="true"}'
        show = icsb_show.parse(sandbox.icsb("show"))
        ports = {p.zone: (p.gateway, str(p.ipv4)) for p in show.ports_on("ts").values()}
        assert ports == {"hq": ("hq-node-1", "169.254.100.71/24"), "ai": ("ai-node-1", "169.254.100.23/24"),
                         "edge": ("edge-node-1", "169.254.100.52/24"), "dr": ("dr-node-1", "169.254.100.34/24")}
        assert sandbox.nb("hq", "lrp-get-gateway-chassis", "hq-ts").split() == [
            "hq-ts-hq-node-1", "100", "hq-ts-hq-node-2", "99"]
        workdir = sandbox.workdir
        assert oct(workdir.stat().st_mode & 0o777) == "0o700"
        sockets = {str(p) for p in workdir.rglob("*") if p.is_socket()}
        assert sockets and all(s.startswith(f"{workdir}/") for s in sockets)
    assert not workdir.exists()


@needs_ovn
def test_deployments_are_traced_through_their_rendered_scripts() -> None:
    result = proof.prove(build_file(REPO / "sites" / "openstack-k8s" / "fabric.yaml"))
    assert [(a.name, a.kind, str(a.transit_address)) for a in result.azs] == [
        ("openstack", "deployment", "169.254.100.200"), ("k8s-prod-az", "deployment", "169.254.100.201")]
    assert [(p.source.label, str(p.target.cidr), p.outcome) for p in result.pairs] == [
        ("openstack", "10.128.0.0/14", "delivered"), ("k8s-prod-az", "10.100.0.0/16", "delivered")]


# ---------------------------------------------------------------- broken output fails, naming pairs
@needs_ovn
def test_a_stale_actual_capture_fails_and_names_the_zone(tmp_path: Path) -> None:
    live = IPv4Address("169.254.100.5")
    lab = build_file(LAB)
    with assembly.running(lab, {"hq": live}) as running:
        show = running.sandbox.icsb("show")  # what `kubectl ko icsbctl show` prints after hq re-joined
    capture = tmp_path / "show.txt"
    capture.write_text(show)

    result = fabricgen("verify", "--logical", "sites/lab/fabric.yaml", "--actual", str(capture))
    assert result.returncode == exit_codes.UNREACHABLE, result.stdout + result.stderr
    out = result.stdout
    assert out.splitlines()[-1] == "9/12 pairs delivered"
    for other, cidr in (("ai", "172.30.20.0/24"), ("edge", "172.30.30.0/24"), ("dr", "172.30.40.0/24")):
        assert (f"not delivered: {other} ({cidr}) -> hq (172.30.10.0/24): unresolved: next hop 169.254.100.71 "
                f"unresolved: no transit port on ts has that address (hq's is {live})") in out
    assert ("transit address: zone hq: transit address 169.254.100.71 in sites/lab/fabric.yaml, 169.254.100.5 on "
            "the live transit switch") in out
    rows = out.splitlines()
    assert rows[rows.index("") + 3].split() == ["ai", "UNRESOLVED", "-", "ok", "ok"]

    piped = fabricgen("verify", "--logical", "sites/lab/fabric.yaml", "--actual", "-", "--format", "json", stdin=show)
    doc = json.loads(piped.stdout)
    assert piped.returncode == exit_codes.UNREACHABLE
    assert [a["name"] for a in doc["azs"] if a["stale"]] == ["hq"]


@needs_ovn
def test_a_removed_route_fails_and_names_the_pair() -> None:
    def drop_route_to_ai(spec: dict[str, Any]) -> None:
        spec["staticRoutes"] = [r for r in spec["staticRoutes"] if r["cidr"] != "172.30.20.0/24"]

    result = proof.prove(with_vpc_spec(build_file(LAB), "hq", drop_route_to_ai))
    assert (result.delivered, len(result.pairs)) == (11, 12)
    (pair,) = failing(result).values()
    assert (pair.source.az, pair.target.az, pair.outcome) == ("hq", "ai", paths.DROPPED)
    assert pair.detail == "dropped in hq: no route to 172.30.20.0/24"


@needs_ovn
def test_a_removed_allow_policy_is_rerouted_to_a_node() -> None:
    def drop_allow_to_dr(spec: dict[str, Any]) -> None:
        spec["policyRoutes"] = [p for p in spec["policyRoutes"] if p["match"] != "ip4.dst == 172.30.40.0/24"]

    result = proof.prove(with_vpc_spec(build_file(LAB), "edge", drop_allow_to_dr))
    assert list(failing(result)) == [("edge", "dr")]
    pair = failing(result)[("edge", "dr")]
    assert pair.outcome == paths.REROUTED
    assert "priority-29000" in pair.detail and "172.30.40.0/24" in pair.detail


@needs_ovn
def test_a_next_hop_of_another_zone_is_a_wrong_zone() -> None:
    def to_edge(spec: dict[str, Any]) -> None:
        for route in spec["staticRoutes"]:
            if route["cidr"] == "172.30.40.0/24":  # dr's backbone, through edge's address
                route["nextHopIP"] = "169.254.100.52"

    result = proof.prove(with_vpc_spec(build_file(LAB), "ai", to_edge))
    assert list(failing(result)) == [("ai", "dr")]
    pair = failing(result)[("ai", "dr")]
    assert (pair.outcome, pair.detail) == (paths.WRONG_ZONE, "sent to edge instead (next hop 169.254.100.52)")


@needs_ovn
def test_a_zone_without_transit_address_is_not_reached(tmp_path: Path) -> None:
    fabric = tmp_path / "fabric.yaml"
    fabric.write_text(zones_fabric(3).replace("    transitAddress: 169.254.100.12\n", ""))
    result = subprocess.run([sys.executable, "-m", "fabricgen", "verify", "--logical", "fabric.yaml"], cwd=tmp_path,
                            capture_output=True, text=True, check=False)
    assert result.returncode == exit_codes.UNREACHABLE, result.stderr
    assert "FG106" in result.stderr  # the warning, as validate gives it
    out = result.stdout
    assert out.splitlines()[-1] == "4/6 pairs delivered"
    assert "not delivered: z0 (172.31.0.0/24) -> z2 (172.31.2.0/24): dropped: dropped in z0: no route to " \
           "172.31.2.0/24" in out
    assert "transit address: zone z2: no transitAddress in fabric.yaml yet, so no AZ routes to it" in out


@needs_ovn
def test_auto_route_is_learned_through_ovn_ic_and_allowed_by_kube_ovns_29500_policies() -> None:
    build = build_text(auto_route_fabric(3), "fabric.yaml")
    assert all(not z.routes for z in build.plan.zones)  # nothing explicit: ovn-ic learns
    with assembly.running(build) as lab:
        learned = {str(route.network): origin for route, origin in kubeovn.learned_routes(lab.sandbox, "z0")}
        policies = lab.sandbox.nb("z0", "lr-policy-list", "ovn-cluster")
    assert learned == {"172.31.1.0/24": "connected", "172.31.2.0/24": "connected"}  # join is blacklisted
    rows = [line.split() for line in policies.splitlines()]
    assert ["29500", "ip4.dst", "==", "172.31.1.1/24", "allow"] in rows, policies
    assert proof.prove(build).ok


@needs_ovn
def test_auto_route_without_kube_ovns_29500_policies_is_rerouted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kubeovn, "allow_learned_routes", lambda sandbox, zone: None)
    result = proof.prove(build_text(auto_route_fabric(3), "fabric.yaml"))
    assert {p.outcome for p in result.pairs} == {paths.REROUTED}


def test_a_fabric_without_interconnection_traces_nothing_and_starts_nothing() -> None:
    result = proof.prove(build_file(REPO / "sites" / "cloudstack" / "fabric.yaml"))
    assert (result.azs, result.pairs, result.ok) == ((), (), True)


# ---------------------------------------------------------------- without OVN; interrupted
def test_without_the_ovn_programs_it_says_what_to_install(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # no OVN program on PATH
    result = fabricgen("verify", "sites/lab/fabric.yaml", env=env)
    assert result.returncode == exit_codes.NO_LAB, result.stderr
    assert result.stdout == ""
    assert "ovn-northd" in result.stderr
    assert INSTALL_COMMAND in result.stderr
    assert "Traceback" not in result.stderr


def lab_pids(base: Path) -> dict[int, Path]:
    pids = {}
    for pidfile in base.glob("fg-ovn-*/*/*.pid"):
        try:
            pids[int(pidfile.read_text().strip())] = pidfile
        except (OSError, ValueError):
            continue
    return pids


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


# When the signal comes: as soon as the lab's first daemon runs (zones still starting, some of
# their daemons detaching without a pidfile yet), once two zones' daemons run, and well into the
# run (chassis and packets, or traces).
MOMENTS = {"first-daemon": 1, "zones-starting": 2, "running": None}


@needs_ovn
@pytest.mark.parametrize("moment", list(MOMENTS))
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_lab_stops_every_daemon_and_removes_its_directory(tmp_path: Path, signum: int,
                                                                         moment: str) -> None:
    """An interrupted proof never reports success and never leaves a daemon: exit 130, and no
    process at all names the lab's directory afterwards (`processes.lab_processes`: also one that
    never wrote its pidfile), the directory gone. Flakiness is the defect this guards against:
    docs/development.md ("Tests and tools") gives the loop it was run in."""
    from fabricgen.lab.ovn.processes import lab_processes

    fabric = tmp_path / "fabric.yaml"
    fabric.write_text(zones_fabric(8))
    build_text(fabric.read_text(), "fabric.yaml")  # valid
    base = Path(tempfile.mkdtemp(prefix="i"))  # short: the lab's socket paths must stay < 108 bytes
    env = {**os.environ, "FABRICGEN_OVN_SANDBOX_BASE": str(base)}
    # Its own session, signalled as a group: what a terminal does on Ctrl-C.
    process = subprocess.Popen([sys.executable, "-m", "fabricgen", "verify", str(fabric)], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    seen: dict[int, Path] = {}
    wanted = MOMENTS[moment]
    started = time.monotonic()
    for _ in range(4000):  # bounded: until the moment comes
        seen.update(lab_pids(base))
        if process.poll() is not None:
            break
        northd = sum(p.name == "northd.pid" for p in seen.values())
        if (wanted is not None and (len(seen) if wanted == 1 else northd) >= wanted) or \
                (wanted is None and northd >= 8 and time.monotonic() - started > 1.5):
            break
        time.sleep(0.002)
    assert process.poll() is None, f"the lab finished before it could be interrupted: {process.communicate()}"
    os.killpg(process.pid, signum)
    out, err = process.communicate()
    try:
        assert process.returncode == exit_codes.INTERRUPTED, (out, err)
        assert "interrupted" in err and "Traceback" not in err
        assert "pairs delivered" not in out
        assert seen
        assert [pid for pid in seen if alive(pid)] == []
        assert lab_processes(base) == []
        assert list(base.iterdir()) == []
    finally:
        for pid in lab_processes(base):  # never leave one behind for the next test
            os.kill(pid, signal.SIGKILL)
    base.rmdir()


def test_markdown_of_a_large_lab_lists_failures_instead_of_a_matrix() -> None:
    from ipaddress import IPv4Network

    from fabricgen.lab import verify

    endpoints = [paths.Endpoint(f"z{i}", IPv4Network(f"172.31.{i}.0/24"), f"z{i}") for i in range(20)]
    pairs = tuple(paths.Pair(a, b, paths.DELIVERED if a.az != "z0" else paths.DROPPED, "x")
                  for a in endpoints for b in endpoints if a != b)
    azs = tuple(proof.Az(e.az, "zone", IPv4Address("169.254.100.1"), IPv4Address("169.254.100.1"), "m")
                for e in endpoints)
    result = proof.Proof("ts", IPv4Network("169.254.100.0/24"), azs, tuple(endpoints), pairs)
    md = verify.markdown(result, "f.yaml")
    assert md.startswith("### OVN-IC lab: 361/380 pairs delivered\n")
    assert "| from" not in md
    assert md.count("- not delivered: z0 ") == 19
    text = verify.text(result, "f.yaml")
    assert text.splitlines()[4].split()[:4] == ["from", "\\", "to", "z0"]  # the terminal gets the matrix


# ---------------------------------------------------------------- reading ovn-trace --minimal
SNAT_25_03 = """# ip,reg14=0x1,vlan_tci=0x0000,nw_src=172.30.10.5,nw_dst=172.30.20.5,nw_ttl=64
ip.ttl--;
eth.src = 00:00:a9:fe:64:47;
eth.dst = 00:00:a9:fe:64:17;
ct_snat(ip4.src=169.254.100.250) /* default (use --ct to customize) */ {
    output("ts-ai");
};
"""
SNAT_23_03 = SNAT_25_03.replace("ct_snat(", "ct_snatin_czone(")  # how 23.03 prints ct_snat_in_czone
ARP = """# ip,reg14=0x1,nw_src=172.30.10.5,nw_dst=172.30.20.5
ip.ttl--;
eth.src = 00:00:a9:fe:64:47;
arp {
    eth.dst = ff:ff:ff:ff:ff:ff;
    output("ts-ai");
};
"""


@pytest.mark.parametrize("trace", [SNAT_25_03, SNAT_23_03], ids=["ovn-25.03", "ovn-23.03"])
def test_a_packet_through_conntrack_is_output_with_its_translation(trace: str) -> None:
    """Printed by the real ovn-trace of each release (tests/lab/test_dataplane.py makes the same rule)."""
    assert tracing.outputs(trace) == ["ts-ai"]
    assert tracing.translated(trace) == ["ip4.src=169.254.100.250"]


def test_the_routers_own_arp_request_is_not_the_packet() -> None:
    assert tracing.outputs(ARP) == []
    assert tracing.translated(ARP) == []
    assert tracing.outputs(ARP.replace("arp {", "ct_next(ct_state=est|trk) {\n    arp {") + "};\n") == []
