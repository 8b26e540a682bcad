"""`fabricgen status` against a real OVN-IC: the lab `verify` builds from the rendered output
(`fabricgen.lab`), read through its databases' sockets (an endpoints file), then broken the
ways interconnected clusters break in production (a route deleted, a transit address moved by an
IC rebuild, hand-added routes, gateways reordered, `vxlan_mode` unset); each break must be
found, named and given its fix, and the unbroken lab must be all ok.

On OVN 25.03 (what Kube-OVN 1.15 and later run) the VXLAN lab is all ok. On the system's OVN
23.03, which has no `vxlan_mode`, the transit switch is keyed outside VXLAN's range, and status
says so: the packet loss that follows is silent in the data plane and found from the control plane.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from fabricgen import exit_codes
from fabricgen.cli import main
from fabricgen.lab import assembly
from fabricgen.lab.ovn.programs import Programs
from fabricgen.lab.ovn.running import poll
from support.fabrics import REPO, build_file

pytestmark = pytest.mark.lab  # starts real programs: kubectl, ovn-appctl, ovn-ic, ovn-ic-nbctl, ovn-ic-sbctl...

LAB = REPO / "sites" / "lab" / "fabric.yaml"
SYSTEM = Programs.from_environment()
DEBIAN13 = Programs((REPO / ".ovn" / "25.03").resolve())


def _skip(programs: Programs) -> pytest.MarkDecorator:
    gone = programs.missing()
    return pytest.mark.skipif(bool(gone), reason=f"OVN programs missing ({', '.join(gone)}): scripts/setup.sh --test")


BOTH = [pytest.param(SYSTEM, id="ovn-23.03", marks=_skip(SYSTEM)),
        pytest.param(DEBIAN13, id="ovn-25.03", marks=_skip(DEBIAN13))]


@contextmanager
def running_lab(programs: Programs, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[assembly.Lab, Path]]:
    """The lab of sites/lab with every AZ's transit key synced, and an endpoints file naming its sockets."""
    build = build_file(LAB)
    with assembly.running(build, programs=programs) as lab:
        poll("the transit switch's key in every AZ", lab._keys_synced, tries=500)
        sb = lab.sandbox
        endpoints = {"icDatabase": {"northbound": sb.ic_nb, "southbound": sb.ic_sb},
                     "availabilityZones": {az: {"northbound": sb.nb_db(az), "southbound": sb.sb_db(az)}
                                           for az in lab.azs}}
        path = tmp_path / "endpoints.yaml"
        path.write_text(json.dumps(endpoints), encoding="utf-8")
        monkeypatch.setenv("PATH", programs.search_path())
        yield lab, path


def status(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    code = main(["status", str(LAB), "--format", "json", *args])
    return code, json.loads(capsys.readouterr().out)


def problems(doc: dict[str, object]) -> dict[tuple[str, str], dict[str, str]]:
    """The checks that are not ok, by (subject, check)."""
    checks = doc["checks"]
    assert isinstance(checks, list)
    return {(c["subject"], c["check"]): c for c in checks if c["verdict"] != "ok"}


def is_25_03(programs: Programs) -> bool:
    return programs.versions()[0].startswith("25.03.")


@pytest.mark.parametrize("programs", BOTH)
def test_the_unbroken_lab(programs: Programs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    with running_lab(programs, tmp_path, monkeypatch) as (_lab, endpoints):
        code, doc = status(capsys, "--endpoints", str(endpoints))
    found = problems(doc)
    if is_25_03(programs):
        assert (code, found) == (0, {})
        assert doc["verdict"] == "ok"
    else:  # OVN 23.03 has no vxlan_mode: the transit switch gets a Geneve-range key
        assert code == exit_codes.UNHEALTHY
        assert list(found) == [("IC database", "ic.tunnel-key")]
        why = found["IC database", "ic.tunnel-key"]["why"]
        key = int(re.search(r"has tunnel key (\d+),", why)[1])  # type: ignore[index]
        assert key > 4095 and f"tunnel key {key}, outside VXLAN's range 1024-4095" in why
    checks = doc["checks"]
    assert isinstance(checks, list)
    assert {c["subject"] for c in checks} == {"IC database", "zone hq", "zone ai", "zone edge", "zone dr"}
    assert "zone hq: Kubernetes objects not checked (read directly, not through kubectl)" in doc["notes"]


@pytest.mark.parametrize("programs", BOTH)
def test_each_break_is_found_named_and_fixed(programs: Programs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The lab broken one way after another; after each, status names exactly what broke so far."""
    modern = is_25_03(programs)
    expected: set[tuple[str, str]] = set() if modern else {("IC database", "ic.tunnel-key")}
    with running_lab(programs, tmp_path, monkeypatch) as (lab, endpoints):
        sb = lab.sandbox

        def found() -> dict[tuple[str, str], dict[str, str]]:
            code, doc = status(capsys, "--endpoints", str(endpoints))
            got = problems(doc)
            assert set(got) == expected, doc
            worst = doc["verdict"]
            assert code == {"ok": 0, "drift": 3, "unhealthy": 7}[str(worst)]
            return got

        # a route deleted by hand in ai (the Vpc still has it: the next sync restores it)
        sb.nb("ai", "--policy=dst-ip", "lr-route-del", "ovn-cluster", "172.30.10.0/24")
        expected.add(("zone ai", "routes.missing"))
        got = found()
        assert got["zone ai", "routes.missing"]["why"] == \
            "route 172.30.10.0/24 via 169.254.100.71 is not on ovn-cluster"
        assert "argocd app sync fabric-lab-ai" in got["zone ai", "routes.missing"]["fix"]

        # hq's transit port gets another address, as after an IC rebuild: the other zones' routes go stale
        sb.nb("hq", "set", "Logical_Router_Port", "hq-ts", 'networks="169.254.100.99/24"')
        poll("hq's new address in the IC database", lambda: "169.254.100.99/24" in sb.icsb("show"))
        expected |= {("zone hq", "transit.address"), ("zone ai", "routes.stale"), ("zone edge", "routes.stale"),
                     ("zone dr", "routes.stale")}
        got = found()
        assert got["zone hq", "transit.address"]["why"].startswith(
            "its port ts-hq has 169.254.100.99; the fabric says 169.254.100.71")
        assert got["zone hq", "transit.address"]["fix"].startswith(
            "fabricgen transit sites/lab/fabric.yaml SHOW --write")
        assert got["zone edge", "routes.stale"]["why"].startswith(
            "route 172.30.10.0/24 leads to 169.254.100.71, but hq's transit address is now 169.254.100.99")

        # a route and a policy added by hand in edge
        sb.nb("edge", "lr-route-add", "ovn-cluster", "10.99.0.0/16", "169.254.100.23")
        sb.nb("edge", "lr-policy-add", "ovn-cluster", "1000", "ip4.dst == 10.99.0.0/16", "drop")
        expected |= {("zone edge", "routes.by-hand"), ("zone edge", "policies.by-hand")}
        got = found()
        assert got["zone edge", "routes.by-hand"]["fix"].startswith("remove it (ovn-nbctl lr-route-del ovn-cluster "
                                                                    "10.99.0.0/16)")

        # dr's gateway chassis change their order
        sb.nb("dr", "lrp-set-gateway-chassis", "dr-ts", "dr-node-2", "101")
        expected.add(("zone dr", "gateways"))
        got = found()
        assert got["zone dr", "gateways"]["why"] == (
            "the gateway chassis of dr-ts are dr-node-2 (101), dr-node-1 (100); the fabric says dr-node-1, "
            "dr-node-2 in that order")

        # vxlan_mode unset on the IC database; OVN 25.03 re-keys the transit switch from the Geneve range
        sb.icnb("remove", "IC_NB_Global", ".", "options", "vxlan_mode")
        if modern:
            poll("the transit switch re-keyed", lambda: int(sb.icsb("--bare", "--columns=tunnel_key", "find",
                                                                     "Datapath_Binding", "transit_switch=ts")) > 4095)
            poll("the new key in every AZ", lab._keys_synced, tries=500)
        expected |= {("IC database", "ic.vxlan-mode"), ("IC database", "ic.tunnel-key")}
        got = found()
        assert got["IC database", "ic.vxlan-mode"]["verdict"] == "unhealthy"
        assert got["IC database", "ic.vxlan-mode"]["fix"].startswith(
            "ovn-ic-nbctl set IC_NB_Global . options:vxlan_mode=true")

        # an AZ the fabric does not have registers in the IC database
        sb.start_az("rogue", az_name="rogue")
        poll("rogue registered", lambda: "rogue" in sb.registered_zones())
        expected.add(("IC database", "ic.unknown-az"))
        got = found()
        assert got["IC database", "ic.unknown-az"]["why"].startswith("availability zone rogue is registered")


def test_a_database_that_does_not_answer_is_unreachable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gone = tmp_path / "gone.sock"
    endpoints = {"icDatabase": {"northbound": f"unix:{gone}", "southbound": f"unix:{gone}"},
                 "availabilityZones": {z: {"northbound": f"unix:{gone}", "southbound": f"unix:{gone}"}
                                       for z in ("hq", "ai", "edge", "dr")}}
    path = tmp_path / "endpoints.yaml"
    path.write_text(json.dumps(endpoints), encoding="utf-8")
    code, doc = status(capsys, "--endpoints", str(path))
    assert code == exit_codes.NOT_READ
    found = problems(doc)
    assert found["zone hq", "az"]["verdict"] == "unreachable"
    assert f"unix:{gone}: database connection failed" in found["zone hq", "az"]["why"]
    assert found["IC database", "ic.read"]["verdict"] == "unreachable"


def test_no_program_is_unreachable_not_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # neither kubectl nor the OVN tools
    code, doc = status(capsys)
    assert code == exit_codes.NOT_READ
    found = problems(doc)
    assert "kubectl: command not found" in found["zone hq", "cluster.read"]["why"]
    assert [k for k in found if k[0] == "zone hq"] == [("zone hq", "cluster.read")]
    assert os.environ["PATH"] == str(tmp_path)


def test_a_capture_judged_offline_gives_the_same_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`--capture DIR` keeps every raw output with its command; `--from DIR` judges it with no
    OVN and no kubectl at hand, to the same report and exit code."""
    programs = DEBIAN13 if not DEBIAN13.missing() else SYSTEM
    capture = tmp_path / "capture"
    with running_lab(programs, tmp_path, monkeypatch) as (lab, endpoints):
        lab.sandbox.nb("ai", "--policy=dst-ip", "lr-route-del", "ovn-cluster", "172.30.10.0/24")
        code = main(["status", str(LAB), "--endpoints", str(endpoints), "--capture", str(capture)])
        live = capsys.readouterr().out
    assert code != 0
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert main(["status", str(LAB), "--endpoints", str(endpoints), "--from", str(capture)]) == code
    assert capsys.readouterr().out == live
    index = json.loads((capture / "capture.json").read_text())
    assert index["site"] == "lab" and index["fabric"] == "sites/lab/fabric.yaml"
    entry = next(o for o in index["observations"] if o["key"] == "zones/ai/nb/Logical_Router_Static_Route")
    assert entry["argv"][:2] == ["ovn-nbctl", f"--db={lab.sandbox.nb_db('ai')}"] and entry["exit"] == 0
    assert (capture / entry["stdout"]).read_text().startswith('{"data":')
    assert sorted(p.name for p in capture.iterdir())[:2] == ["capture.json", "ic"]


def test_a_capture_is_new_and_of_this_site(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    existing = tmp_path / "existing"
    existing.mkdir()
    assert main(["status", str(LAB), "--capture", str(existing)]) == exit_codes.INVALID
    assert "already exists; a capture is written to a new directory" in capsys.readouterr().err
    other = tmp_path / "other"
    other.mkdir()
    (other / "capture.json").write_text(json.dumps({"format": "fabricgen-status-capture/1", "site": "nat",
                                                    "fabric": "sites/nat/fabric.yaml", "observations": []}))
    assert main(["status", str(LAB), "--from", str(other)]) == exit_codes.INVALID
    assert "a capture of site 'nat', not of this fabric's site 'lab'" in capsys.readouterr().err
    escape = tmp_path / "escape"
    escape.mkdir()
    (escape / "capture.json").write_text(json.dumps({"format": "fabricgen-status-capture/1", "site": "lab",
                                                     "observations": [{"key": "ic/sb/show", "argv": ["x"], "exit": 0,
                                                                       "stdout": "../outside", "stderr": "e"}]}))
    assert main(["status", str(LAB), "--from", str(escape)]) == exit_codes.INVALID
    assert "'../outside' is not a file inside the capture" in capsys.readouterr().err


@pytest.mark.parametrize("how", ["control", "remote"])
def test_the_ic_databases_raft_members_are_judged(how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The IC northbound database as a real three-member raft cluster, its members named in the
    endpoints file by the fabric's node names: through their control sockets (`cluster/status`)
    or their remotes (`_Server`). Healthy, then one member stopped: quorum kept, the member named."""
    from support.raft_cluster import RaftCluster, missing

    schema = SYSTEM.ovn_schemas / "ovn-ic-nb.ovsschema"
    if missing(SYSTEM, schema):
        pytest.skip(f"raft cluster tools missing: {missing(SYSTEM, schema)}")
    monkeypatch.setenv("PATH", SYSTEM.search_path())
    nodes = ("hq-node-1", "hq-node-2", "hq-node-3")
    with RaftCluster(SYSTEM, schema) as cluster:
        cluster.create(3)
        members = [cluster.members[f"s{i}"] for i in (1, 2, 3)]
        remotes = ",".join(m.remote for m in members)
        via = [{"control": str(m.ctl)} if how == "control" else {"remote": m.remote} for m in members]
        endpoints = {"icDatabase": {"northbound": remotes, "southbound": remotes, "members": [
            {"name": node, "northbound": {**way, "raftAddress": m.address}}
            for node, m, way in zip(nodes, members, via, strict=True)]}}
        path = tmp_path / "endpoints.yaml"
        path.write_text(json.dumps(endpoints), encoding="utf-8")

        def raft_lines() -> dict[str, dict[str, str]]:
            _code, doc = status(capsys, "--endpoints", str(path))
            checks = doc["checks"]
            assert isinstance(checks, list)
            return {c["check"]: c for c in checks if c["subject"] == "IC database nb raft"}

        healthy = raft_lines()
        assert {name: c["verdict"] for name, c in healthy.items()} == {name: "ok" for name in healthy}
        assert "raft.leader" in healthy and "raft.count" in healthy
        cluster.stop("s3")
        degraded = raft_lines()
    assert degraded["raft.reachable"]["verdict"] == "unhealthy"
    assert "hq-node-3" in degraded["raft.reachable"]["why"]
    assert degraded["raft.leader"]["verdict"] == "ok"


def test_wait_reads_again_until_everything_is_ok(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A route missing in ai until, a moment later, Kube-OVN applies it again (as after a sync):
    `--wait` reads again until it is ok; and a break nobody mends keeps its code when the time is up."""
    import threading

    from fabricgen.lab.platforms import kubeovn

    programs = DEBIAN13 if not DEBIAN13.missing() else SYSTEM
    with running_lab(programs, tmp_path, monkeypatch) as (lab, endpoints):
        sb = lab.sandbox
        sb.nb("ai", "--policy=dst-ip", "lr-route-del", "ovn-cluster", "172.30.10.0/24")
        mended = threading.Event()

        def mend() -> None:
            mended.wait(30)
            sb.nb("ai", *kubeovn.batch(kubeovn.create_static_route("172.30.10.0/24", "169.254.100.71", "dst-ip", "",
                                                                    kubeovn.VENDOR)))

        worker = threading.Thread(target=mend)
        worker.start()
        try:
            progress = []
            real_write = os.sys.stderr.write

            def stderr_write(text: str) -> int:
                if text.startswith("fabricgen status: drift"):
                    progress.append(text)
                    mended.set()  # mend only once a reading saw the route missing
                return real_write(text)

            monkeypatch.setattr(os.sys.stderr, "write", stderr_write)
            code = main(["status", str(LAB), "--endpoints", str(endpoints), "--wait", "60s", "--interval", "0.2",
                         "--format", "json"])
        finally:
            mended.set()
            worker.join()
        doc = json.loads(capsys.readouterr().out)
        if is_25_03(programs):
            assert (code, doc["verdict"]) == (0, "ok")
        assert progress and progress[0].startswith("fabricgen status: drift: ")
        assert "reading again in 0.2 s" in progress[0]
        sb.nb("ai", "--policy=dst-ip", "lr-route-del", "ovn-cluster", "172.30.10.0/24")
        assert main(["status", str(LAB), "--endpoints", str(endpoints), "--wait", "1s", "--interval", "0.2"]) == \
            (exit_codes.CHANGED if is_25_03(programs) else exit_codes.UNHEALTHY)
        assert "zone ai: route 172.30.10.0/24 via 169.254.100.71 is not on ovn-cluster" in capsys.readouterr().out


def test_wait_takes_a_duration(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", str(LAB), "--wait", "soon"]) == exit_codes.USAGE
    assert "--wait: 'soon' is not a duration (e.g. 90s, 5m, 1h30m)" in capsys.readouterr().err


def test_an_endpoints_file_with_mistakes_names_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "endpoints.yaml"
    path.write_text("icDatabase:\n  northbound: --db=evil\n  southbund: unix:/x\n"
                    "availabilityZones:\n  nowhere: {northbound: 'unix:/a', southbound: 'unix:/b'}\n"
                    "  hq:\n    northbound: unix:/a\n    southbound: unix:/b\n"
                    "    members:\n      - {name: n1, northbound: {control: /c, remote: 'unix:/d'}}\n",
                    encoding="utf-8")
    assert main(["status", str(LAB), "--endpoints", str(path)]) == exit_codes.INVALID
    err = capsys.readouterr().err
    assert f"{path}:2:3: icDatabase.northbound: expected an OVSDB remote" in err
    assert f"{path}:3:3: icDatabase.southbund: unknown key; expected one of members, northbound, southbound" in err
    assert f"{path}:10:20: availabilityZones.hq.members[0].northbound: give exactly one of control (a control " \
           "socket path) or remote (the member's OVSDB remote)" in err
    positions = [(int(m[1]), int(m[2])) for m in re.finditer(r"endpoints\.yaml:(\d+):(\d+): ", err)]
    assert len(positions) == 4 and positions == sorted(positions)
    path.write_text("availabilityZones:\n  nowhere: {northbound: 'unix:/a', southbound: 'unix:/b'}\n", encoding="utf-8")
    assert main(["status", str(LAB), "--endpoints", str(path)]) == exit_codes.INVALID
    assert "availabilityZones names nowhere, which the fabric has neither as a zone nor as an OVN deployment" in \
        capsys.readouterr().err


def lab_endpoints(lab: assembly.Lab, path: Path) -> Path:
    sb = lab.sandbox
    path.write_text(json.dumps({
        "icDatabase": {"northbound": sb.ic_nb, "southbound": sb.ic_sb},
        "availabilityZones": {name: {"northbound": sb.nb_db(az), "southbound": sb.sb_db(az)}
                              for name, az in _fabric_names(lab).items()},
        # the lab has no Kubernetes API: the consumers' objects are not read (test_status_clusters)
        "kubernetesClusters": {c.name: {"read": False} for d in lab.build.plan.fabric.ovn_deployments
                               for c in d.consumers if c.platform == "kubernetes"}}), encoding="utf-8")
    return path


def _fabric_names(lab: assembly.Lab) -> dict[str, str]:
    """Each AZ of the lab by the name the fabric gives it (a deployment's name, not its AZ name)."""
    names = {z.spec.name: z.spec.name for z in lab.zones}
    names.update({j.deployment.name: j.az for j in lab.joins})
    return names


def test_deployments_are_judged_by_their_scripts_routes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """sites/openstack-k8s: two OVN deployments joined by their rendered configure-ovn-ic.sh (routes
    marked fabricgen-owner, gateway chassis by system-id). All ok; then one of the script's routes
    deleted, and a route of the platform's own (unmarked) left alone."""
    fabric = REPO / "sites" / "openstack-k8s" / "fabric.yaml"
    build = build_file(fabric)
    monkeypatch.setenv("PATH", SYSTEM.search_path())
    with assembly.running(build, programs=SYSTEM) as lab:
        endpoints = lab_endpoints(lab, tmp_path / "endpoints.yaml")
        args = ["status", str(fabric), "--endpoints", str(endpoints), "--format", "json"]
        assert main(args) == 0, capsys.readouterr().out
        doc = json.loads(capsys.readouterr().out)
        lines = {(c["subject"], c["check"]): c for c in doc["checks"]}
        assert lines["deployment openstack", "gateways"]["why"] == "gateway chassis net1, in the fabric's order"
        assert lines["deployment kubernetes", "routes"]["why"] == (
            "the 1 route(s) of the fabric are on ic-router, every next hop current")
        join = next(j for j in lab.joins if j.deployment.name == "openstack")
        lab.sandbox.nb(join.az, "--policy=dst-ip", "lr-route-del", join.router, "10.128.0.0/14")
        lab.sandbox.nb(join.az, "lr-route-add", join.router, "192.0.2.0/24", "169.254.100.201")
        assert main(args) == exit_codes.CHANGED
        doc = json.loads(capsys.readouterr().out)
    found = problems(doc)
    assert list(found) == [("deployment openstack", "routes.missing")]
    assert found["deployment openstack", "routes.missing"]["why"] == \
        "route 10.128.0.0/14 via 169.254.100.201 is not on ic-router"
    assert "configure-ovn-ic.sh" in found["deployment openstack", "routes.missing"]["fix"]


def test_learned_routes_are_the_other_zones_prefixes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """With autoRoute, each zone learns exactly the others' backbones through ovn-ic; without it, a
    learned route left in a zone (as after turning auto-route off, kube-ovn issue 923) is named."""
    from support.fabrics import auto_route_fabric, build_text

    text = auto_route_fabric(3)
    fabric = tmp_path / "fabric.yaml"
    fabric.write_text(text, encoding="utf-8")
    monkeypatch.setenv("PATH", SYSTEM.search_path())
    with assembly.running(build_text(text, "fabric.yaml"), programs=SYSTEM) as lab:
        endpoints = lab_endpoints(lab, tmp_path / "endpoints.yaml")
        main(["status", str(fabric), "--endpoints", str(endpoints), "--format", "json"])
        doc = json.loads(capsys.readouterr().out)
        learned = {c["subject"]: c for c in doc["checks"] if c["check"] == "routes.learned"}
        assert {s: c["verdict"] for s, c in learned.items()} == {"zone z0": "ok", "zone z1": "ok", "zone z2": "ok"}
        assert learned["zone z0"]["why"] == "learned the 2 prefix(es) the other AZs advertise, nothing else"
        off = tmp_path / "off.yaml"
        off.write_text(text.replace("  autoRoute: true\n", ""), encoding="utf-8")
        main(["status", str(off), "--endpoints", str(endpoints), "--format", "json"])
        doc = json.loads(capsys.readouterr().out)
    left = [c for c in problems(doc).values() if c["check"] == "routes.learned"]
    assert left and all("was learned through ovn-ic although the fabric has autoRoute off" in c["why"] for c in left)
