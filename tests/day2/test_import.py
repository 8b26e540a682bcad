"""`fabricgen import`: a fabric.yaml from a running fabric, its validation and its round-trip proof.

The four-site lab of sites/lab, built by hand, as its clusters return it is in tests/data/import/lab/: per cluster the
output of the `kubectl get` commands of docs/status-and-import.md (hq.yaml and edge.yaml as `-o yaml`, ai.json and
dr.json as `-o json`), with what the API server, the kubeovn-operator, Kube-OVN's controllers
and SUSE Virtualization's network controller add (server metadata, last-applied annotations,
finalizers, status, the Subnet defaults of formatSubnet, the NAD labels of ensureLabels; hq's
routes as `kubectl patch` left them, ai's and edge's as Kube-OVN writes them back);
icsb-show.txt and ic-nb-options.txt are verbatim `ovn-ic-sbctl show` and `ovn-ic-nbctl get
IC_NB_Global . options` of OVN 23.03, from the verify lab with the lab's transit addresses
(test_a_live_ic_database_gives_the_same_fabric makes them again). Other samples go through
tests/support/live_cluster.py, a model of the same upstream code.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from ipaddress import IPv4Address
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from fabricgen.adopt.proof import OWN
from fabricgen.cli import main
from fabricgen.judge import kube_compare
from fabricgen.observe import icnb_options
from fabricgen.observe import kube_objects as ko
from support import live_cluster
from support.fabrics import REPO, build_file, build_text

DATA = REPO / "tests" / "data" / "import" / "lab"
CLUSTERS = {"hq": DATA / "hq.yaml", "ai": DATA / "ai.json", "edge": DATA / "edge.yaml", "dr": DATA / "dr.json"}
SHOW = DATA / "icsb-show.txt"
OPTIONS = DATA / "ic-nb-options.txt"
LAB_NEXT_HOPS = {"172.30.20.0/24": "169.254.100.23", "172.30.30.0/24": "169.254.100.52",
                  "172.30.40.0/24": "169.254.100.34"}


def run_import(fabric: Path, clusters: dict[str, Path | list[Path]], show: Path = SHOW,
               options: Path | None = OPTIONS, *extra: str) -> tuple[int, str, str]:
    import io
    from contextlib import redirect_stderr, redirect_stdout

    args = ["import", str(fabric)]
    for name, paths in clusters.items():
        for path in paths if isinstance(paths, list) else [paths]:
            args += ["--cluster", f"{name}={path}"]
    args += ["--show", str(show)]
    if options is not None:
        args += ["--ic-nb-options", str(options)]
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([*args, *extra])
    return code, out.getvalue(), err.getvalue()


def proof(fabric: Path, clusters: dict[str, Path | list[Path]], **kwargs: Any) -> tuple[int, dict[str, Any], str]:
    code, out, err = run_import(fabric, clusters, kwargs.pop("show", SHOW), kwargs.pop("options", OPTIONS),
                                "--format", "json")
    return code, json.loads(out), err


def entries(doc: dict[str, Any], status: str | None = None) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["cluster"], e["object"]): e for e in doc["entries"] if status is None or e["status"] == status}


def site(tmp_path: Path) -> Path:
    path = tmp_path / "sites" / "lab" / "fabric.yaml"
    return path


# ---------------------------------------------------------------- editing the captures
def documents(path: Path) -> list[Any]:
    """The documents of a capture (YAML or concatenated JSON) as plain data."""
    if path.suffix == ".json":
        text, decoder, pos, docs = path.read_text(), json.JSONDecoder(), 0, []
        while text[pos:].strip():
            while text[pos].isspace():
                pos += 1
            doc, pos = decoder.raw_decode(text, pos)
            docs.append(doc)
        return docs
    from ruamel.yaml import YAML

    return [d for d in YAML(typ="safe").load_all(path.read_text()) if d]


def items(docs: list[Any]) -> list[dict[str, Any]]:
    return [item for doc in docs for item in doc.get("items", [doc])]


def find(docs: list[Any], kind: str, name: str) -> dict[str, Any]:
    return next(i for i in items(docs) if i["kind"] == kind and i["metadata"]["name"] == name)


def write_docs(path: Path, docs: list[Any]) -> Path:
    path.write_text("".join(json.dumps(d, indent=4) + "\n" for d in docs))
    return path


def edited(tmp_path: Path, cluster: str, change: Any) -> Path:
    """A copy of a cluster's capture, as JSON, after `change(docs)`."""
    docs = documents(CLUSTERS[cluster])
    change(docs)
    return write_docs(tmp_path / f"{cluster}-edited.json", docs)


# ---------------------------------------------------------------- the lab
def test_the_lab_imports_exactly_validates_and_renders_its_routes(tmp_path: Path) -> None:
    fabric = site(tmp_path)
    code, doc, err = proof(fabric, dict(CLUSTERS))
    assert code == 0, err
    assert doc["exact"] and doc["valid"] and doc["written"] and doc["diagnostics"] == []
    assert doc["counts"]["partial"] == doc["counts"]["conflict"] == 0
    imported = entries(doc, "imported")
    for cluster in CLUSTERS:  # every object fabricgen renders from each cluster
        for title in ("ConfigMap: kube-system/ovn-ic-config", "Configuration: kube-system/kubeovn", "Vpc: ovn-cluster",
                      f"Subnet: backbone-{cluster}", "NetworkAttachmentDefinition: default/vsw-backbone"):
            assert (cluster, title) in imported, (cluster, title)
    for title in ("Vpc: vpc-prod", "Vpc: vpc-shared", "Vpc: vpc-dev", "Subnet: prod-db", "Subnet: dev-app",
                  "NetworkAttachmentDefinition: default/shared-svc"):
        assert ("hq", title) in imported
    assert {k for k in imported if k[0] == "ovn-ic-sb"} == {("ovn-ic-sb", f"AvailabilityZone: {z}") for z in CLUSTERS}
    added = entries(doc, "added")
    assert set(added) == {("hq", "ConfigMap: kube-system/fabricgen-ic-db-setup")}
    # install-ic-server.sh's IC server: fabricgen's renders the same members, TS_NUM and image
    assert ("hq", "Deployment: kube-system/ovn-ic-server") in imported
    unmapped = entries(doc, "unmapped")
    assert unmapped[("hq", "Subnet: ovn-default")]["reason"].startswith("read: Kube-OVN's default Subnet")
    assert unmapped[("hq", "Node: hq-node-2")]["reason"] == "read: IC database member 10.10.10.12 (its InternalIP)"
    assert unmapped[("dr", "HelmChart: kube-system/rke2-canal")]["reason"].startswith("read: Canal's pod range")

    text = fabric.read_text()
    assert text.startswith("# yaml-language-server: $schema=../../schemas/fabric.schema.json\n")
    assert main(["validate", str(fabric)]) == 0
    assert main(["render", str(fabric), "-o", str(tmp_path / "rendered"), "-q"]) == 3
    patch = json.loads((tmp_path / "rendered" / "lab" / "hq" / "ic-routes-hq.json").read_text())
    assert {r["cidr"]: r["nextHopIP"] for r in patch["spec"]["staticRoutes"]} == LAB_NEXT_HOPS
    assert [p["match"] for p in patch["spec"]["policyRoutes"]] == [f"ip4.dst == {c}" for c in LAB_NEXT_HOPS]
    assert {p["priority"] for p in patch["spec"]["policyRoutes"]} == {31000}


def objects_by_zone(build: Any) -> dict[tuple[str, ko.ObjectId], dict[str, Any]]:
    out = {}
    for zone in build.plan.fabric.zones:
        for obj in build.objects(zone.name):
            out[(zone.name, ko.identify(obj))] = ko.normalise(obj)
    return out


def test_the_imported_lab_renders_the_objects_sites_lab_renders(tmp_path: Path) -> None:
    """The lab's own fabric and the one imported from its clusters give the same objects, field for field."""
    fabric = site(tmp_path)
    assert run_import(fabric, dict(CLUSTERS))[0] == 0
    ours = objects_by_zone(build_text(fabric.read_text(), "sites/lab/fabric.yaml"))
    # the watch's RBAC is not in a cluster import reads (a hand-built one has none): its image and
    # placement are the fabric's to say
    theirs = {k: v for k, v in objects_by_zone(build_file(REPO / "sites" / "lab" / "fabric.yaml")).items()
              if k[1].name != "fabricgen-watch"}
    assert sorted(ours) == sorted(theirs)
    for key, obj in theirs.items():
        assert kube_compare.compare(obj, ours[key], fields="all").equal, key


def test_the_captures_hold_what_the_upstream_schemas_allow() -> None:
    """Every custom resource of the captures, status included, validates against its upstream CRD
    (tests/crds, strict: an unknown field fails), as the API server would have stored it; and so do
    the objects of the model for the NAT gateway sample."""
    from support.crds import crd_schemas, crd_validator

    schemas = crd_schemas()
    nat = live_cluster.live(build_file(REPO / "sites" / "nat" / "fabric.yaml").objects("hq"), "hq", harvester=True)
    captured = [o.body for path in CLUSTERS.values() for o in ko.read_objects(path.read_text(), path.name)]
    checked = 0
    for obj in captured + nat:
        key = (obj["apiVersion"], obj["kind"])
        if key in schemas:
            errors = [f"{list(e.absolute_path)}: {e.message}" for e in crd_validator(*key).iter_errors(obj)]
            assert errors == [], (key, obj["metadata"]["name"])
            checked += 1
    assert checked >= 40


def test_the_text_report_has_the_table_and_the_verdict(tmp_path: Path) -> None:
    code, out, err = run_import(site(tmp_path), dict(CLUSTERS))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"fabricgen import: {site(tmp_path)}"
    assert lines[2].split() == ["cluster", "zone", "imported", "partial", "conflict", "unmapped", "added"]
    assert lines[3].split() == ["hq", "hq", "19", "0", "0", "6", "1"]  # added: the IC server's script
    assert lines[7].split() == ["ovn-ic-sb", "-", "4", "0", "0", "0", "0"]
    assert "round trip: exact: every object fabricgen renders equals the live one" in lines
    assert "the round trip is exact" in err


def test_import_never_replaces_a_file(tmp_path: Path) -> None:
    fabric = site(tmp_path)
    fabric.parent.mkdir(parents=True)
    fabric.write_text("# mine\n")
    code, out, err = run_import(fabric, dict(CLUSTERS))
    assert code == 1 and out == ""
    assert "exists; import writes only a new file" in err
    assert fabric.read_text() == "# mine\n"


# ---------------------------------------------------------------- the classes
def hand_routes(docs: list[Any]) -> None:
    vpc = find(docs, "Vpc", "ovn-cluster")
    vpc["spec"]["staticRoutes"] += [
        {"cidr": "10.200.0.0/16", "nextHopIP": "169.254.100.52", "policy": "policyDst"},  # kept in defaultVpc
        {"cidr": "10.201.0.0/16", "nextHopIP": "169.254.100.52", "policy": "policyDst", "routeTable": "mgmt"},
    ]
    vpc["spec"]["policyRoutes"].append({"action": "allow", "match": "ip4.dst == 10.200.0.0/16", "priority": 31000})


def test_each_class_is_shown(tmp_path: Path) -> None:
    def stale(docs: list[Any]) -> None:
        routes = find(docs, "Vpc", "ovn-cluster")["spec"]["staticRoutes"]
        next(r for r in routes if r["cidr"] == "172.30.20.0/24")["nextHopIP"] = "169.254.100.99"

    def scratch(docs: list[Any]) -> None:
        nad = json.loads(json.dumps(find(docs, "NetworkAttachmentDefinition", "vsw-backbone")))
        nad["metadata"]["name"] = "scratch"
        docs[-1]["items"].append(nad)

    def copy_of_hq(docs: list[Any]) -> None:
        find(docs, "ConfigMap", "ovn-ic-config")["data"]["gw-nodes"] = "dr-node-1"

    spare = tmp_path / "spare.json"  # a cluster that never joined: no ovn-ic-config
    spare.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        find(documents(CLUSTERS["ai"]), "Subnet", "ovn-default")]}))
    clusters: dict[str, Path | list[Path]] = {
        "hq": edited(tmp_path, "hq", hand_routes), "ai": CLUSTERS["ai"], "edge": edited(tmp_path, "edge", stale),
        "dr": [CLUSTERS["dr"], write_docs(tmp_path / "dr-extra.json", [{"apiVersion": "v1", "kind": "List",
                                                                          "items": []}])],
        "dr-copy": edited(tmp_path, "dr", copy_of_hq), "spare": spare,
    }
    clusters["ai"] = edited(tmp_path, "ai", scratch)
    code, doc, _err = proof(site(tmp_path), clusters)
    assert code == 3 and doc["valid"] and not doc["exact"]
    found = entries(doc)
    # a hand-added route that defaultVpc can hold is kept; one with a route table cannot be: partial
    vpc = found[("hq", "Vpc: ovn-cluster")]
    assert vpc["status"] == "partial"
    assert [(d["kind"], d["path"]) for d in vpc["differences"]] == [
        ("extra", "spec.staticRoutes[cidr=10.201.0.0/16,routeTable=mgmt]")]
    assert vpc["notExpressed"][0].startswith('static route {"cidr": "10.201.0.0/16"')
    text = site(tmp_path).read_text()
    assert "defaultVpc:" in text and "- {cidr: 10.200.0.0/16, nextHopIP: \"169.254.100.52\"}" in text
    assert "- {priority: 31000, match: \"ip4.dst == 10.200.0.0/16\", action: allow}" in text
    assert "10.201.0.0/16" not in text
    # a stale route to another zone's backbone is a conflict; the fabric routes via the live address
    edge_vpc = found[("edge", "Vpc: ovn-cluster")]
    assert edge_vpc["status"] == "conflict" and "stale static route" in edge_vpc["reason"]
    assert [d["describe"] if "describe" in d else d["path"] for d in edge_vpc["differences"]] == [
        "spec.staticRoutes[cidr=172.30.20.0/24].nextHopIP"]
    # an object fabricgen does not manage
    assert found[("ai", "NetworkAttachmentDefinition: default/scratch")]["status"] == "unmapped"
    # two clusters claiming one az-name: the second is a conflict and left out
    clash = found[("dr-copy", "ConfigMap: kube-system/ovn-ic-config")]
    assert clash["status"] == "conflict" and clash["reason"].startswith("az-name dr is also cluster dr's")
    assert found[("dr-copy", "Subnet: backbone-dr")]["reason"].startswith("cluster dr-copy is not imported")
    # a cluster with no ovn-ic-config is no zone
    assert found[("spare", "Subnet: ovn-default")]["status"] == "unmapped"
    assert "has no ConfigMap kube-system/ovn-ic-config" in found[("spare", "Subnet: ovn-default")]["reason"]
    assert any("cluster spare: no ovn-ic-config" in n for n in doc["notes"])
    assert doc["counts"] == {s: sum(e["status"] == s for e in doc["entries"])
                             for s in ("imported", "partial", "conflict", "unmapped", "added")}


def test_two_zones_on_one_transit_address_are_a_conflict_and_an_error(tmp_path: Path) -> None:
    show = tmp_path / "show.txt"
    show.write_text(SHOW.read_text().replace("64:22 169.254.100.34/24", "64:22 169.254.100.23/24"))
    code, doc, _err = proof(site(tmp_path), dict(CLUSTERS), show=show)
    assert code == 1 and doc["written"] and not doc["valid"]
    found = entries(doc)
    for zone, other in (("ai", "dr"), ("dr", "ai")):
        entry = found[("ovn-ic-sb", f"AvailabilityZone: {zone}")]
        assert entry["status"] == "conflict" and f"the address of zone {other} as well" in entry["reason"]
    assert [(d["code"], d["path"]) for d in doc["diagnostics"]] == [("FG207", "zones[3].transitAddress")]


def test_a_zone_missing_from_the_ic_database_gets_no_transit_address(tmp_path: Path) -> None:
    show = tmp_path / "show.txt"
    lines = SHOW.read_text().splitlines(keepends=True)
    start = lines.index("availability-zone dr\n")
    show.write_text("".join(lines[:start] + lines[start + 12:]))
    code, doc, _err = proof(site(tmp_path), dict(CLUSTERS), show=show)
    assert code == 3  # valid (a warning), but the live routes to dr cannot be derived: conflicts
    assert [d["code"] for d in doc["diagnostics"]] == ["FG106"]
    assert "transitAddress: \"169.254.100.34\"" not in site(tmp_path).read_text()
    hq = entries(doc)[("hq", "Vpc: ovn-cluster")]
    assert hq["status"] == "conflict" and "dr has no port on the transit switch" in hq["reason"]
    assert any("zone dr is not in" in n for n in doc["notes"])


# ---------------------------------------------------------------- validation of the new file
def test_hand_built_mistakes_are_located_in_the_new_file(tmp_path: Path) -> None:
    """A two-member raft, natOutgoing on a backbone, VXLAN without vxlan_mode, Canal's range as the pod CIDR."""
    def two_members(docs: list[Any]) -> None:
        find(docs, "ConfigMap", "ovn-ic-config")["data"]["ic-db-host"] = "10.10.10.11,10.10.10.12"
        if any(i["kind"] == "Deployment" for i in items(docs)):  # install-ic-server.sh on two master nodes
            server = find(docs, "Deployment", "ovn-ic-server")
            server["spec"]["replicas"] = 2
            env = server["spec"]["template"]["spec"]["containers"][0]["env"]
            next(e for e in env if e["name"] == "NODE_IPS")["value"] = "10.10.10.11,10.10.10.12"

    def dr(docs: list[Any]) -> None:
        two_members(docs)
        find(docs, "Subnet", "backbone-dr")["spec"]["natOutgoing"] = True
        find(docs, "Subnet", "ovn-default")["spec"].update(cidrBlock="10.52.0.0/16", gateway="10.52.0.1",
                                                           excludeIps=["10.52.0.1"])

    options = tmp_path / "options.txt"
    options.write_text("{}\n")  # vxlan_mode never set
    clusters: dict[str, Path | list[Path]] = {z: edited(tmp_path, z, two_members) for z in ("hq", "ai", "edge")}
    clusters["dr"] = edited(tmp_path, "dr", dr)
    fabric = site(tmp_path)
    code, out, err = run_import(fabric, clusters, SHOW, options)
    assert code == 1 and fabric.exists()
    assert "round trip: exact" in out  # the file says what runs, mistakes included
    text = fabric.read_text().splitlines()
    located = {}
    for line in err.splitlines():
        if line.startswith("sites/lab/fabric.yaml:") or line.startswith(str(fabric)):
            where, path, _rest = line.split(": ", 2)
            located[line.rsplit("[", 1)[1].rstrip("]")] = (path, int(where.split(":")[-2]))
    assert {code: path for code, (path, _line) in located.items()} == {
        "FG103": "interconnection.database.members", "FG104": "interconnection.database.vxlanMode",
        "FG209": "zones[3].cluster.podCIDR", "FG301": "zones[3].backbone.natOutgoing"}
    assert text[located["FG104"][1] - 1].strip().startswith("vxlanMode: false")
    assert text[located["FG301"][1] - 1].strip().startswith("natOutgoing: true")
    assert text[located["FG209"][1] - 1].strip().startswith("podCIDR: 10.52.0.0/16")
    assert "which has 4 error(s), 0 warning(s)" in err


# ---------------------------------------------------------------- bad input
def secret(docs: list[Any]) -> None:
    docs.append({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "ovn-ipsec-ca", "namespace": "kube-system"},
                 "data": {"cacert": "c2VjcmV0"}})


def daemonset(docs: list[Any]) -> None:
    docs[0]["items"].append({"apiVersion": "apps/v1", "kind": "DaemonSet",
                             "metadata": {"name": "kube-ovn-cni", "namespace": "kube-system"}, "spec": {}})


@pytest.mark.parametrize(("case", "message"), [
    ("table", "this is the table `kubectl get` prints without `-o yaml`"),
    ("secret", "Secret: kube-system/ovn-ipsec-ca (v1): a Secret is never read"),
    ("daemonset", "DaemonSet: kube-system/kube-ovn-cni (apps/v1): import does not read this kind"),
    ("other-fabric", "none in common, so the capture is of another interconnection"),
    ("not-a-show", "expected `availability-zone NAME`"),
    ("kubectl-error", "a message of kubectl's ('Error from server (Forbidden)"),
    ("no-zone", "no cluster of the input is joined to the interconnection"),
    ("missing", "no such file"),
])
def test_bad_input_is_refused_and_nothing_is_written(tmp_path: Path, case: str, message: str) -> None:
    clusters: dict[str, Path | list[Path]] = dict(CLUSTERS)
    show = SHOW
    if case == "table":
        table = tmp_path / "hq.txt"
        table.write_text("NAME          PROVIDER                   VPC           PROTOCOL   CIDR\n"
                         "backbone-hq   vsw-backbone.default.ovn   ovn-cluster   IPv4       172.30.10.0/24\n")
        clusters["hq"] = table
    elif case == "secret":
        clusters["ai"] = edited(tmp_path, "ai", secret)
    elif case == "daemonset":
        clusters["hq"] = edited(tmp_path, "hq", daemonset)
    elif case == "other-fabric":
        show = tmp_path / "show.txt"
        show.write_text(live_cluster.show({"az1": ("gw-1", "169.254.100.1"), "az2": ("gw-2", "169.254.100.2")}))
    elif case == "not-a-show":
        show = tmp_path / "show.txt"
        show.write_text("ovn-ic-sbctl: unix:/var/run/ovn/ovn_ic_sb_db.sock: database connection failed\n")
    elif case == "kubectl-error":
        error = tmp_path / "dr.yaml"
        error.write_text('Error from server (Forbidden): subnets.kubeovn.io is forbidden: User "x" cannot list\n')
        clusters["dr"] = error
    elif case == "no-zone":
        clusters = {"spare": write_docs(tmp_path / "spare.json", [find(documents(CLUSTERS["ai"]), "Subnet", "join")])}
    elif case == "missing":
        clusters["edge"] = tmp_path / "edge-not-captured.yaml"
    fabric = site(tmp_path)
    code, out, err = run_import(fabric, clusters, show)
    assert code == 1, err
    assert message in err and out == ""
    assert "nothing written" in err
    assert not fabric.exists() and not fabric.parent.exists()


def test_every_input_problem_is_named_at_once(tmp_path: Path) -> None:
    table = tmp_path / "hq.txt"
    table.write_text("NAME   AGE\nx      1d\n")
    code, _out, err = run_import(site(tmp_path), {**CLUSTERS, "hq": table, "ai": edited(tmp_path, "ai", secret)},
                                 tmp_path / "no-show.txt")
    assert code == 1
    assert err.startswith("fabricgen: error: the input was refused (nothing written):\n")
    assert "hq.txt: document 1: text, not objects" in err
    assert "a Secret is never read" in err and "no-show.txt: no such file" in err


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", str(tmp_path / "fabric.yaml"), "--cluster", "hq", "--show", str(SHOW)]) == 2
    assert "--cluster 'hq': write NAME=FILE" in capsys.readouterr().err
    no_site = tmp_path / "My Fabrics" / "fabric.yaml"
    assert main(["import", str(no_site), "--cluster", f"hq={CLUSTERS['hq']}", "--show", str(SHOW)]) == 2
    assert "is not a site name; give --site NAME" in capsys.readouterr().err
    assert main(["import", str(no_site), "--site", "Lab", "--cluster", f"hq={CLUSTERS['hq']}",
                 "--show", str(SHOW)]) == 2
    assert "--site 'Lab' is not a valid name" in capsys.readouterr().err
    assert not no_site.parent.exists()


# ---------------------------------------------------------------- injection
def test_nothing_a_cluster_holds_can_change_the_fabrics_structure(tmp_path: Path) -> None:
    """Cluster names, label values and route matches reach comments and values of the new file."""
    def hostile(docs: list[Any]) -> None:
        vpc = find(docs, "Vpc", "ovn-cluster")
        vpc["spec"]["policyRoutes"].append({"action": "drop", "priority": 100,
                                            "match": 'ip4.src == 10.9.9.9 /* x: y, "z" [a] {b} */'})
        vpc["spec"]["policyRoutes"].append({"action": "drop", "priority": 102, "match": "ip4.src == 10.9.9.9 # x"})
        vpc["spec"]["policyRoutes"].append({"action": "drop", "priority": 101, "match": "ip4.src == 1.1.1.1\n- bad"})
        find(docs, "NetworkAttachmentDefinition", "vsw-backbone")["metadata"]["labels"][
            "network.harvesterhci.io/clusternetwork"] = "mgmt\n  injected: true"

    name = "hq\n# evil: yes"
    code, doc, _err = proof(site(tmp_path), {name: edited(tmp_path, "hq", hostile), "ai": CLUSTERS["ai"],
                                             "edge": CLUSTERS["edge"], "dr": CLUSTERS["dr"]})
    assert code == 3 and doc["valid"]
    text = site(tmp_path).read_text()
    assert "injected" not in text and "\n# evil" not in text and "hq\\n# evil: yes" in text
    assert "- {priority: 100, match: \"ip4.src == 10.9.9.9 /* x: y, \\\"z\\\" [a] {b} */\", action: drop}" in text
    assert "10.9.9.9 # x" not in text  # OVN refuses `#`: left out, said why
    assert "1.1.1.1" not in text
    vpc = entries(doc)[("hq\n# evil: yes", "Vpc: ovn-cluster")]
    assert vpc["status"] == "partial" and vpc["notExpressed"][0].startswith("policy route")
    assert any("OVN's parser refuses its match" in n for n in vpc["notExpressed"]), vpc["notExpressed"]


# ---------------------------------------------------------------- other samples, through the model
def capture(tmp_path: Path, name: str, objects: list[dict[str, Any]]) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(live_cluster.kubectl_list(objects))
    return path


def test_a_nat_gateway_site_imports_exactly(tmp_path: Path) -> None:
    """sites/nat: the external network (ProviderNetwork, Vlan, NAD, Subnet), a gateway, its EIP and rules."""
    build = build_file(REPO / "sites" / "nat" / "fabric.yaml")
    objects = live_cluster.live(build.objects("hq"), "hq", harvester=True)
    objects.append(live_cluster.node("hq", "hq-node-1", "10.10.10.11"))
    objects.append(live_cluster.ic_server("hq", ["10.10.10.11"], ts_num=1))
    show = tmp_path / "show.txt"
    show.write_text(live_cluster.show({"hq": ("hq-node-1", "169.254.100.23")}))
    fabric = tmp_path / "sites" / "nat" / "fabric.yaml"
    code, doc, _err = proof(fabric, {"hq": capture(tmp_path, "hq", objects)}, show=show, options=None)
    assert code == 0, json.dumps([e for e in doc["entries"] if e["status"] in ("partial", "conflict")], indent=1)
    imported = {o for (_c, o) in entries(doc, "imported")}
    assert {"VpcNatGateway: gw-prod", "IptablesEIP: eip-prod", "IptablesSnatRule: snat-prod-app",
            "IptablesDnatRule: dnat-prod-https", "ProviderNetwork: vpc-external", "Vlan: vpc-external",
            "Subnet: ovn-vpc-external-network", "NetworkAttachmentDefinition: kube-system/ovn-vpc-external-network",
            "ConfigMap: kube-system/ovn-vpc-nat-gw-config", "Vpc: vpc-prod", "Subnet: prod-app"} <= imported
    # install-ic-server.sh's IC server runs in hq, so the imported fabric runs the IC database there
    # (sites/nat says nothing of where it runs): fabricgen's IC server objects come on top
    assert "zone: hq" in fabric.read_text()
    ours = objects_by_zone(build_text(fabric.read_text(), "sites/nat/fabric.yaml"))
    assert sorted(k for k in ours if k[1] not in OWN) == sorted(objects_by_zone(build))
    assert "vxlan_mode was not captured" in fabric.read_text()


def test_the_lab_through_the_model_imports_exactly(tmp_path: Path) -> None:
    build = build_file(REPO / "sites" / "lab" / "fabric.yaml")
    clusters: dict[str, Path | list[Path]] = {}
    for zone in build.plan.fabric.zones:
        pod, service = str(zone.cluster.pod_cidr), str(zone.cluster.service_cidr)
        objects = live_cluster.live(build.objects(zone.name), zone.name, harvester=True, pod=pod, service=service)
        if zone.name == "hq":
            objects += [live_cluster.node("hq", f"hq-node-{n}", f"10.10.10.1{n}") for n in (1, 2, 3)]
            objects.append(live_cluster.ic_server("hq", ["10.10.10.11", "10.10.10.12", "10.10.10.13"], ts_num=1))
        clusters[zone.name] = capture(tmp_path, zone.name, objects)
    code, doc, err = proof(site(tmp_path), clusters)
    assert code == 0, err
    assert doc["counts"]["imported"] == 38 and doc["counts"]["partial"] == 0


# ---------------------------------------------------------------- the IC northbound options
@pytest.mark.parametrize(("text", "expected"), [
    ("{}\n", {}),
    ('{vxlan_mode="true"}\n', {"vxlan_mode": "true"}),
    ('{foo=bar, vxlan_mode="true", "a b"="c\\"d"}', {"foo": "bar", "vxlan_mode": "true", "a b": 'c"d'}),
    ('_uuid               : 64e12cb4-533a-4b1c-bad3-328020f9bdc4\noptions             : {vxlan_mode="false"}\n',
     {"vxlan_mode": "false"}),
])
def test_ic_nb_options_parse(text: str, expected: dict[str, str]) -> None:
    assert icnb_options.parse(text) == expected


@pytest.mark.parametrize("text", ["vxlan_mode=true", '{vxlan_mode="true"', "{a b}", '{a="x}', "{a=1 b=2}",
                                  "{a=1, a=2}"])
def test_ic_nb_options_refuse_anything_else(text: str) -> None:
    with pytest.raises(icnb_options.OptionsParseError):
        icnb_options.parse(text, "opts.txt")


def test_vxlan_mode_reads_as_ovn_ic_reads_it() -> None:
    assert icnb_options.vxlan_mode({"vxlan_mode": "TRUE"})
    assert not icnb_options.vxlan_mode({"vxlan_mode": "yes"}) and not icnb_options.vxlan_mode({})


# ---------------------------------------------------------------- real OVN: a live IC database
def _ovn_missing() -> list[str]:
    from fabricgen.lab.ovn.sandbox import missing_prerequisites

    return missing_prerequisites()


@pytest.mark.skipif(bool(_ovn_missing()), reason="real OVN needed (apt-get install ovn-central ovn-host ovn-ic "
                                                  "ovn-ic-db openvswitch-switch)")
@pytest.mark.lab
def test_a_live_ic_database_gives_the_same_fabric(tmp_path: Path) -> None:
    """The lab's four AZs joined on a real OVN-IC (VXLAN, two gateways each, vxlan_mode set by the
    rendered configure-ic-db.sh); `ovn-ic-sbctl show` and `ovn-ic-nbctl get IC_NB_Global . options`
    captured from it; the import from them is the one from the committed captures."""
    from fabricgen.lab.ovn.sandbox import Sandbox, ZoneSpec

    addresses = {"hq": "169.254.100.71", "ai": "169.254.100.23", "edge": "169.254.100.52", "dr": "169.254.100.34"}
    zones = [ZoneSpec(z, IPv4Address(a), f"{z}-node-1", IPv4Address(f"10.10.{10 * (i + 1)}.11"), (f"{z}-node-2",))
             for i, (z, a) in enumerate(addresses.items())]
    script = tmp_path / "configure-ic-db.sh"
    script.write_text(build_file(REPO / "sites" / "lab" / "fabric.yaml").files[
        PurePosixPath("lab", "hq", "ic-db", "configure-ic-db.sh")].text)
    with Sandbox.running(zones, encapsulation="vxlan") as sandbox:
        subprocess.run(["sh", str(script)], env={**sandbox.env(), "OVN_IC_NB_DB": sandbox.ic_nb}, check=True,
                       capture_output=True)
        (tmp_path / "show.txt").write_text(sandbox.icsb("show"))
        (tmp_path / "options.txt").write_text(sandbox.icnb("get", "IC_NB_Global", ".", "options"))
    live = tmp_path / "live" / "lab" / "fabric.yaml"
    committed = tmp_path / "committed" / "lab" / "fabric.yaml"
    code, doc, err = proof(live, dict(CLUSTERS), show=tmp_path / "show.txt", options=tmp_path / "options.txt")
    assert code == 0 and doc["exact"], err
    assert run_import(committed, dict(CLUSTERS))[0] == 0
    from ruamel.yaml import YAML

    assert YAML(typ="safe").load(live.read_text()) == YAML(typ="safe").load(committed.read_text())


# ---------------------------------------------------------------- a user's own repository
@pytest.mark.lab
def test_from_a_fabric_repository_with_fabricgen_on_path(tmp_path: Path) -> None:
    """As a user of an installed fabricgen runs it: in a git repository of their own, fabricgen from
    PATH, the captures beside the fabric; then schema, validate, render, `render --check`, kustomize."""
    repo = tmp_path / "network-fabric"
    (repo / "captures").mkdir(parents=True)
    for path in (*CLUSTERS.values(), SHOW, OPTIONS):
        shutil.copy(path, repo / "captures" / path.name)
    bin_dir = Path(sys.executable).parent
    env = {"PATH": f"{bin_dir}{os.pathsep}/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
           "GIT_AUTHOR_NAME": "n", "GIT_AUTHOR_EMAIL": "n@example.org", "GIT_COMMITTER_NAME": "n",
           "GIT_COMMITTER_EMAIL": "n@example.org"}

    def sh(script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", script], cwd=repo, env=env, capture_output=True, text=True, check=False)

    assert sh("git init -q && command -v fabricgen").stdout.strip() == str(bin_dir / "fabricgen")
    clusters = " ".join(f"--cluster {z}=captures/{p.name}" for z, p in CLUSTERS.items())
    done = sh(f"fabricgen import sites/lab/fabric.yaml {clusters} --show captures/icsb-show.txt "
              "--ic-nb-options captures/ic-nb-options.txt")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fabricgen schema -o" in done.stderr  # the modeline's schema is not there yet
    assert "(captures/hq.yaml)" in (repo / "sites/lab/fabric.yaml").read_text()
    assert sh("fabricgen schema -o schemas/fabric.schema.json").returncode == 3
    assert sh("fabricgen validate sites/lab/fabric.yaml").returncode == 0
    assert sh("fabricgen render sites/lab/fabric.yaml -q").returncode == 3
    assert sh("fabricgen render --check sites/lab/fabric.yaml").returncode == 0
    again = sh(f"fabricgen import sites/lab/fabric.yaml {clusters} --show captures/icsb-show.txt")
    assert again.returncode == 1 and "exists; import writes only a new file" in again.stderr
    assert sh("git add -A && git commit -q -m 'Adopt the lab'").returncode == 0
    if shutil.which("kubectl"):
        built = sh("kubectl kustomize rendered/lab/hq")
        assert built.returncode == 0, built.stderr
        from ruamel.yaml import YAML

        objects = [d for d in YAML(typ="safe").load_all(built.stdout) if d]
        vpc = next(o for o in objects if o["kind"] == "Vpc" and o["metadata"]["name"] == "ovn-cluster")
        assert {r["cidr"]: r["nextHopIP"] for r in vpc["spec"]["staticRoutes"]} == LAB_NEXT_HOPS
        assert any(o["kind"] == "Subnet" and o["metadata"]["name"] == "backbone-hq" for o in objects)
