"""`fabricgen status` through kubectl, judged from captures in the exact form kubectl prints.

No Kubernetes API server can be installed from this machine's package sources (Debian 12 has
only kubectl, as `kubernetes-client`; the package index has no kube-apiserver), so the kubectl
path is tested on what kubectl returns, answered to the very probes status makes (`observe.live_fabric.gather`
with an observer that answers them), and then judged from the capture that records them
(`--from`), the way a user attaches one to a ticket:

- `kubectl get pods -l app=ovn-central -o json`: a `List` of pods as the API server returns
  them (labels, `spec.nodeName`, `status.podIP`, `status.phase`, `containerStatuses`), with
  Kube-OVN's leader labels (`ovn-nb-leader`, `ovn-sb-leader`, `ovn-ic-nb-leader`);
- `kubectl get --ignore-not-found -o json TYPE/NAME ...`: the zone's objects as the import
  captures of the lab's clusters hold them (`tests/data/import/lab`: server-added metadata,
  `managedFields`, `status`), the rest rendered plus what the API server adds;
- `kubectl exec POD -c ovn-central -- ovn-nbctl ...`: the same JSON tables a direct read gets,
  from the real OVN lab;
- `kubectl exec POD -- ovn-appctl ... cluster/status DB`: verbatim `cluster/status` output of a
  real three-member cluster (`tests/data/raft/ovs-3.5`).

What reaches kubectl for real: a kubeconfig whose server does not answer (`kubectl` itself
fails, and the zone is unreachable), and no credential of it is ever printed or captured.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from fabricgen import exit_codes
from fabricgen.cli import main
from fabricgen.lab import assembly
from fabricgen.lab.ovn.programs import Programs
from fabricgen.lab.ovn.running import poll
from fabricgen.observe import capture, kube_objects, sources
from fabricgen.observe import live_fabric as live
from fabricgen.observe import runner as observe
from support.fabrics import REPO, build_file, build_text

LAB = REPO / "sites" / "lab" / "fabric.yaml"
IMPORTS = REPO / "tests" / "data" / "import" / "lab"
RAFT = REPO / "tests" / "data" / "raft" / "ovs-3.5"
DEBIAN13 = Programs((REPO / ".ovn" / "25.03").resolve())
SYSTEM = Programs.from_environment()
PODS = ("ovn-central-7d9c5b8f6-4xk2p", "ovn-central-7d9c5b8f6-9qv7m", "ovn-central-7d9c5b8f6-tz8wd")
IC_PODS = ("ovn-ic-server-5f6b7c9d8-2mz4q", "ovn-ic-server-5f6b7c9d8-h7rkx", "ovn-ic-server-5f6b7c9d8-xw9lc")
Obj = dict[str, Any]


def pods_list(names: Sequence[str], app: str, leader_labels: Sequence[str], nodes: Sequence[str]) -> str:
    """`kubectl get pods -l app=APP -o json`, the first pod labelled leader."""
    items = []
    for i, name in enumerate(names):
        labels = {"app": app, "component": "network", "pod-template-hash": "7d9c5b8f6", "type": "infra"}
        if i == 0:
            labels.update({label: "true" for label in leader_labels})
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": name, "namespace": "kube-system", "labels": labels,
                                   "uid": f"0b0c0d0e-0000-4000-8000-00000000000{i}", "resourceVersion": "81234"},
                      "spec": {"nodeName": nodes[i], "hostNetwork": True,
                               "containers": [{"name": app, "image": "docker.io/kubeovn/kube-ovn:v1.16.2"}]},
                      "status": {"phase": "Running", "podIP": f"10.10.10.{11 + i}",
                                 "containerStatuses": [{"name": app, "ready": True, "restartCount": 0}]}})
    return json.dumps({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}},
                      indent=4) + "\n"


def server_added(obj: Obj, number: int) -> Obj:
    """A rendered object as the API server and Kube-OVN return it."""
    out = copy.deepcopy(obj)
    meta = out.setdefault("metadata", {})
    meta.update({"uid": f"5a0d0000-0000-4000-8000-{number:012d}", "resourceVersion": str(4000 + number),
                 "generation": 1, "creationTimestamp": "2025-08-14T16:02:11Z",
                 "managedFields": [{"manager": "argocd-controller", "operation": "Apply", "apiVersion":
                                    out.get("apiVersion", "v1"), "fieldsType": "FieldsV1", "fieldsV1": {}}]})
    if out.get("apiVersion", "").startswith("kubeovn.io/"):
        out["status"] = {"conditions": [{"type": "Ready", "status": "True", "reason": "ResourceReady"}]}
    return out


def cluster_objects(build: Any, zone: str) -> dict[kube_objects.ObjectId, Obj]:
    """The zone's objects in its cluster: everything the import capture of the lab holds (the fabric's
    objects, Kube-OVN's own Subnets, Nodes, Canal's HelmChart), and the rendered objects it lacks
    plus what the server adds."""
    out = {kube_objects.identify(o): server_added(o, i) for i, o in enumerate(build.objects_within(zone))}
    for path in IMPORTS.glob(f"{zone}.*"):
        for found in kube_objects.read_objects(path.read_text(encoding="utf-8"), path.name):
            if found.id.kind != "Deployment":  # the IC server runs as rendered, install-ic-server.sh's replaced
                out[found.id] = found.body
    return out


PLURALS = {v: k for k, v in live.RESOURCES.items()} | {"nodes": ("", "Node"),
                                                       "helmcharts.helm.cattle.io": ("helm.cattle.io", "HelmChart")}


PLURALS_OF = {kind: plural for plural, kind in PLURALS.items()}


def as_list(items: Sequence[Obj], *, empty: bool = False) -> str:
    """What `kubectl get -o json` prints for these objects: for none, an empty List when a kind was
    listed (`empty`), nothing when named objects were asked for with --ignore-not-found."""
    if not items and not empty:
        return ""
    return json.dumps({"apiVersion": "v1", "items": list(items), "kind": "List", "metadata": {"resourceVersion": ""}},
                      indent=4) + "\n"


RAFT_PORTS = {"OVN_Northbound": 6643, "OVN_Southbound": 6644, "OVN_IC_Northbound": 6647, "OVN_IC_Southbound": 6648}


def raft_text(member: int, database: str) -> str:
    """A healthy member's `cluster/status` of a three-member cluster, its members on the pods'
    (host network) addresses at the database's raft port: each `unix:.../sN.raft` address becomes
    `tcp:10.10.10.1N:PORT`, and its nickname (a unix address's file name) the short server id
    raft.c gives a tcp address."""
    text = (RAFT / f"healthy-s{member}.txt").read_text(encoding="utf-8").replace("OVN_Northbound", database)
    for n, sid, address in re.findall(r"^    s(\d) \(([0-9a-f]{4}) at (\S+)\)", text, re.MULTILINE):
        text = text.replace(address, f"tcp:10.10.10.1{n}:{RAFT_PORTS[database]}")
        text = re.sub(rf"(?<![\w/.])s{n}(?![\w.])", sid, text)
    return text


def kubectl_answers(build: Any, ovn: Mapping[str, capture.Observation],
                    objects: Callable[[str], dict[kube_objects.ObjectId, Obj]]) -> observe.Observer:
    """An observer answering the probes of a kubectl run as kubectl would print the answers."""

    class Kubectl:
        def observe(self, probes: Sequence[observe.Probe]) -> dict[str, capture.Observation]:
            return {p.key: capture.Observation(p.key, p.argv, 0, answer(p), "") for p in probes}

    def answer(probe: observe.Probe) -> str:
        parts = probe.key.split("/")
        if probe.key == "ic/pods/ovn-ic-server":
            return pods_list(IC_PODS, "ovn-ic-server", ("ovn-ic-nb-leader", "ovn-ic-sb-leader"),
                             ("hq-node-1", "hq-node-2", "hq-node-3"))
        if parts[0] == "zones" and parts[2] == "pods":
            return pods_list(PODS, "ovn-central", ("ovn-nb-leader", "ovn-sb-leader", "ovn-northd-leader"),
                             tuple(f"{parts[1]}-node-{i}" for i in (1, 2, 3)))
        if parts[0] == "zones" and parts[2] == "objects":
            have = objects(parts[1])
            if parts[3] == "list":  # kubectl get --all-namespaces -o json RESOURCE
                kind = PLURALS[parts[4]]
                return as_list([body for oid, body in have.items() if (oid.group, oid.kind) == kind], empty=True)
            namespace = probe.argv[probe.argv.index("-n") + 1]
            wanted = [tuple(a.split("/", 1)) for a in probe.argv[probe.argv.index("json") + 1:]]
            return as_list([body for oid, body in have.items() if oid.namespace in (namespace, "")
                            and (PLURALS_OF.get((oid.group, oid.kind)), oid.name) in wanted])
        if "raft" in parts:
            pods = IC_PODS if parts[0] == "ic" else PODS
            names = {"nb": "OVN_IC_Northbound" if parts[0] == "ic" else "OVN_Northbound",
                     "sb": "OVN_IC_Southbound" if parts[0] == "ic" else "OVN_Southbound"}
            return raft_text(pods.index(parts[-1]) + 1, names[parts[-2]])
        return ovn[probe.key].stdout

    return Kubectl()


@pytest.fixture(scope="module")
def ovn_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, capture.Observation]:
    """What the databases of the lab print, read directly (the keys kubectl's reads share)."""
    programs = DEBIAN13 if not DEBIAN13.missing() else SYSTEM
    if programs.missing():
        pytest.skip(f"OVN programs missing: {programs.missing()}")
    build = build_file(LAB)
    with assembly.running(build, programs=programs) as lab:
        poll("the transit switch's key in every AZ", lab._keys_synced, tries=500)
        sb = lab.sandbox
        given = sources.Endpoints(
            sources.IcSource(sources.Direct(sb.ic_nb, sb.ic_sb)),
            {az: (sources.Direct(sb.nb_db(az), sb.sb_db(az)), ()) for az in lab.azs})
        recording = observe.Recording(observe.Live(env={"PATH": programs.search_path()}))
        live.gather(build, sources.plan(build, given), recording)
        return dict(recording.kept)


def judged(tmp_path: Path, capsys: pytest.CaptureFixture[str], ovn: Mapping[str, capture.Observation],
           edit: Callable[[str, dict[kube_objects.ObjectId, Obj]], None] = lambda zone, objs: None
           ) -> tuple[int, dict[str, Any], Path]:
    build = build_file(LAB)

    def objects(zone: str) -> dict[kube_objects.ObjectId, Obj]:
        have = cluster_objects(build, zone)
        edit(zone, have)
        return have

    recording = observe.Recording(kubectl_answers(build, ovn, objects))
    live.gather(build, sources.plan(build, sources.Endpoints()), recording)
    where = tmp_path / "capture"
    capture.write(where, recording.kept, site="lab", fabric="sites/lab/fabric.yaml")
    code = main(["status", str(LAB), "--from", str(where), "--format", "json"])
    return code, json.loads(capsys.readouterr().out), where


def not_ok(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, str]]:
    return {(c["subject"], c["check"]): c for c in doc["checks"] if c["verdict"] != "ok"}


@pytest.mark.lab
def test_the_lab_through_kubectl_is_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       ovn_tables: dict[str, capture.Observation]) -> None:
    code, doc, where = judged(tmp_path, capsys, ovn_tables)
    problems = not_ok(doc)
    if ovn_tables["ic/sb/show"].argv[0] and "16711682" in ovn_tables["ic/sb/Datapath_Binding"].stdout:
        assert list(problems) == [("IC database", "ic.tunnel-key")]  # the system's OVN 23.03
    else:
        assert (code, problems) == (0, {}), [(c['subject'], c['check'], c['why']) for c in problems.values()]
    checks = {(c["subject"], c["check"]) for c in doc["checks"]}
    for zone in ("hq", "ai", "edge", "dr"):
        assert (f"zone {zone}", "objects") in checks
        assert (f"zone {zone} nb raft", "raft.leader") in checks
    assert ("IC database nb raft", "raft.servers") in checks
    index = json.loads((where / "capture.json").read_text())
    argv = {o["key"]: o["argv"] for o in index["observations"]}
    assert argv["zones/ai/nb/Logical_Router"] == [
        "kubectl", "--context", "ai", "--request-timeout=20s", "-n", "kube-system", "exec", PODS[0], "-c",
        "ovn-central", "--", "ovn-nbctl", "--timeout=20", "--no-leader-only", "--format=json",
        "--columns=_uuid,name,static_routes,policies,ports", "list", "Logical_Router"]
    assert argv["ic/raft/sb/" + IC_PODS[2]][-6:] == [
        "ovn-appctl", "-t", "/var/run/ovn/ovn_ic_sb_db.ctl", "--timeout=20", "cluster/status", "OVN_IC_Southbound"]
    assert argv["zones/dr/pods/ovn-central"][:4] == ["kubectl", "--context", "dr", "--request-timeout=20s"]


@pytest.mark.lab
def test_objects_that_drifted_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        ovn_tables: dict[str, capture.Observation]) -> None:
    """A Subnet gone, a backbone that SNATs, and a route someone added to the Vpc ovn-cluster."""
    def edit(zone: str, objs: dict[kube_objects.ObjectId, Obj]) -> None:
        if zone == "ai":
            del objs[kube_objects.ObjectId("kubeovn.io", "Subnet", "", "backbone-ai")]
        if zone == "edge":
            objs[kube_objects.ObjectId("kubeovn.io", "Subnet", "", "backbone-edge")]["spec"]["natOutgoing"] = True
            vpc = objs[kube_objects.ObjectId("kubeovn.io", "Vpc", "", "ovn-cluster")]
            vpc["spec"]["staticRoutes"].append({"cidr": "10.99.0.0/16", "nextHopIP": "169.254.100.9",
                                                "policy": "policyDst"})

    code, doc, _where = judged(tmp_path, capsys, ovn_tables, edit)
    problems = not_ok(doc)
    assert code in (exit_codes.CHANGED, exit_codes.UNHEALTHY)
    assert problems["zone ai", "object.missing"]["why"] == "Subnet: backbone-ai is not in the cluster"
    assert problems["zone edge", "object.changed"]["why"] == (
        "Subnet: backbone-edge differs: spec.natOutgoing: false in the fabric, true live")
    assert problems["zone edge", "object.vpc-routes"]["why"].startswith(
        "Vpc: ovn-cluster holds route(s) fabricgen did not render: 10.99.0.0/16 via 169.254.100.9;")
    assert problems["zone edge", "object.vpc-routes"]["fix"] == \
        "add them to zones[].defaultVpc in the fabric (or remove them)"


@pytest.mark.lab
def test_what_other_owners_add_to_a_subnets_policy_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            ovn_tables: dict[str, capture.Observation]) -> None:
    """A `drop ip4` at 32767 on the backbone, an ACL on prod-web and `private: true` on dev-app,
    where the fabric renders none of these fields: each changes who reaches the subnet, and a
    sync, which never set them, leaves them. They read ok before."""
    drop = {"action": "drop", "direction": "to-lport", "match": "ip4", "priority": 32767}

    def edit(zone: str, objs: dict[kube_objects.ObjectId, Obj]) -> None:
        if zone == "hq":
            objs[kube_objects.ObjectId("kubeovn.io", "Subnet", "", "backbone-hq")]["spec"]["acls"] = [drop]
            objs[kube_objects.ObjectId("kubeovn.io", "Subnet", "", "prod-web")]["spec"]["acls"] = [
                {**drop, "action": "allow-related", "priority": 3000, "match": "ip4.src == 0.0.0.0/0"}]
            objs[kube_objects.ObjectId("kubeovn.io", "Subnet", "", "dev-app")]["spec"]["private"] = True

    code, doc, _where = judged(tmp_path, capsys, ovn_tables, edit)
    assert code in (exit_codes.CHANGED, exit_codes.UNHEALTHY)
    named = sorted(c["why"] for c in doc["checks"] if c["check"] == "object.policy")
    assert named == [
        'Subnet: backbone-hq has spec.acls = [{"action": "drop", "direction": "to-lport", "match": "ip4", '
        '"priority": 32767}], which the fabric does not render: it changes who reaches the subnet, beside the '
        "fabric's policy, and a sync leaves it",
        "Subnet: dev-app has spec.private = true, which the fabric does not render: it changes who reaches the "
        "subnet, beside the fabric's policy, and a sync leaves it",
        'Subnet: prod-web has spec.acls = [{"action": "allow-related", "direction": "to-lport", "match": '
        '"ip4.src == 0.0.0.0/0", "priority": 3000}], which the fabric does not render: it changes who reaches '
        "the subnet, beside the fabric's policy, and a sync leaves it"]
    assert ("zone hq", "objects") not in {(c["subject"], c["check"]) for c in doc["checks"] if c["verdict"] == "ok"}


@pytest.mark.lab
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_with_a_cluster_that_does_not_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Real kubectl, a kubeconfig with a token and a client key, an API server that refuses the
    connection: every zone is unreachable with kubectl's reason, and neither the token nor the key
    is in the output or the capture."""
    token, key = "s3cr3t-t0ken-do-not-print", "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCnNlY3JldA=="
    config = tmp_path / "kubeconfig"
    contexts = [{"name": z, "context": {"cluster": "lab", "user": "admin"}} for z in ("hq", "ai", "edge", "dr")]
    config.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "hq", "contexts": contexts,
        "clusters": [{"name": "lab", "cluster": {"server": "https://127.0.0.1:9", "insecure-skip-tls-verify": True}}],
        "users": [{"name": "admin", "user": {"token": token, "client-key-data": key}}]}), encoding="utf-8")
    monkeypatch.setenv("KUBECONFIG", str(config))
    where = tmp_path / "capture"
    code = main(["status", str(LAB), "--capture", str(where)])
    out, err = capsys.readouterr()
    assert code == exit_codes.NOT_READ
    assert "unreachable zone hq: its cluster could not be read: `kubectl --context hq" in out
    assert "127.0.0.1:9" in out  # kubectl's own reason
    written = "".join(p.read_text(errors="replace") for p in where.rglob("*") if p.is_file())
    for secret in (token, key):
        assert secret not in out + err + written


@pytest.mark.lab
def test_import_adopts_a_status_capture(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch,
                                        ovn_tables: dict[str, capture.Observation]) -> None:
    """`fabricgen import --from DIR` takes what `status --capture` wrote through kubectl: the
    zones' objects, `ovn-ic-sbctl show`, the IC northbound options. The fabric it writes renders
    the live objects back."""
    _code, _doc, where = judged(tmp_path, capsys, ovn_tables)
    target = tmp_path / "repo" / "sites" / "lab" / "fabric.yaml"
    target.parent.mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo")  # the fabric named sites/lab/fabric.yaml, as the lab's was
    code = main(["import", "sites/lab/fabric.yaml", "--from", str(where), "--format", "json"])
    out, _err = capsys.readouterr()
    doc = json.loads(out)
    assert code == 0, [e["object"] for e in doc["entries"] if e["status"] == "partial"]
    assert doc["valid"] is True and doc["exact"] is True
    text = target.read_text(encoding="utf-8")
    header = " ".join(line.lstrip("# ") for line in text.splitlines() if line.startswith("#"))
    assert f"fabricgen status --capture {where.as_posix()} (zones hq, ai, edge, dr)" in header
    for zone in ("hq", "ai", "edge", "dr"):
        assert re.search(rf"^  - name: {zone}\b", text, re.MULTILINE)
    assert re.search(r"^    transitAddress: \"169\.254\.100\.71\"", text, re.MULTILINE)
    assert main(["import", str(tmp_path / "again.yaml"), "--from", str(where), "--show", "x"]) == exit_codes.USAGE
    assert "give --from DIR, or --cluster and --show, not both" in capsys.readouterr().err


@pytest.mark.lab
def test_a_subnet_update_kube_ovn_did_not_apply_is_drift(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         ovn_tables: dict[str, capture.Observation]) -> None:
    """prod-db moves to 10.100.9.0/24 and the cluster holds the new Subnet, but OVN still has its
    router port on 10.100.1.1/24: Kube-OVN's update failed (`CreateLogicalSwitch`, IPAM or the VPC,
    which return without a status patch) and its conditions record no generation, so Argo CD and
    Flux read it Healthy. status reads the router port and names it; the other Subnets are ok."""
    text = LAB.read_text().replace("{name: prod-db, cidr: 10.100.1.0/24}", "{name: prod-db, cidr: 10.100.9.0/24}")
    fabric = tmp_path / "sites" / "lab" / "fabric.yaml"
    fabric.parent.mkdir(parents=True)
    fabric.write_text(text)
    build = build_text(text, "sites/lab/fabric.yaml")
    prod_db = kube_objects.ObjectId("kubeovn.io", "Subnet", "", "prod-db")

    def objects(zone: str) -> dict[kube_objects.ObjectId, Obj]:
        have = cluster_objects(build, zone)
        if zone == "hq":  # the update is in the cluster, as rendered
            rendered = next(o for o in build.objects_within(zone) if kube_objects.identify(o) == prod_db)
            have[prod_db] = server_added(rendered, 99)
        return have

    recording = observe.Recording(kubectl_answers(build, ovn_tables, objects))
    live.gather(build, sources.plan(build, sources.Endpoints()), recording)
    where = tmp_path / "capture"
    capture.write(where, recording.kept, site="lab", fabric=str(fabric))
    main(["status", str(fabric), "--from", str(where), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    lines = {(c["subject"], c["check"]): c for c in doc["checks"] if c["check"] == "subnet.applied"}
    hq = lines["zone hq", "subnet.applied"]
    assert hq["verdict"] == "drift", hq
    assert ("Subnet prod-db is in the cluster as rendered, but OVN does not have it: router port vpc-prod-prod-db "
            "has networks 10.100.1.1/24, where the Subnet says 10.100.9.1/24") in hq["why"]
    assert "kube-ovn-controller" in hq["fix"]
    for zone in ("ai", "edge", "dr"):
        assert lines[f"zone {zone}", "subnet.applied"]["verdict"] == "ok"
