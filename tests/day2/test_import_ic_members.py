"""`fabricgen import` declares every IC database member that runs, and never renders an IC server
with fewer members than run.

Kube-OVN's docs and `yamls/ovn-ic-config.yaml` show `ic-db-host` as one address, while its
`dist/images/install-ic-server.sh` runs one raft member per `kube-ovn/role=master` node (`replicas:
$count`, `NODE_IPS` their InternalIPs). The IC server's Deployment here is that script's, as
`kubectl get -o json` returns it (`support/live_cluster.ic_server`); the raft server list is what a
real three-member IC database, started as Kube-OVN v1.16.2's `start-ic-db.sh` starts it
(`support/kubeovn_db.py`), prints for `cluster/status OVN_IC_Northbound`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_import import CLUSTERS, OPTIONS, SHOW, documents, edited, entries, find, items, proof, site

from fabricgen.cli import main
from support import live_cluster
from support.fabrics import REPO, build_file
from support.kubeovn_db import KubeOvnDatabase, missing

MEMBERS = ["10.10.10.11", "10.10.10.12", "10.10.10.13"]
IC_SERVER = ("hq", "Deployment: kube-system/ovn-ic-server")
IC_CONFIG = ("hq", "ConfigMap: kube-system/ovn-ic-config")


def one_host(docs: list[Any]) -> None:
    """ic-db-host as Kube-OVN's docs show it: the first member's address only."""
    find(docs, "ConfigMap", "ovn-ic-config")["data"]["ic-db-host"] = MEMBERS[0]


def without_ic_server(docs: list[Any]) -> None:
    for doc in list(docs):
        if doc.get("kind") == "Deployment":
            docs.remove(doc)


def server_env(docs: list[Any]) -> dict[str, Any]:
    env = find(docs, "Deployment", "ovn-ic-server")["spec"]["template"]["spec"]["containers"][0]["env"]
    return {e["name"]: e for e in env}


def clusters_with(tmp_path: Path, hq: Any, others: Any = None) -> dict[str, Path | list[Path]]:
    """The lab's captures, hq's edited by `hq`, every cluster's by `others` (ovn-ic-config is in each)."""
    out: dict[str, Path | list[Path]] = {}
    for cluster in CLUSTERS:
        def change(docs: list[Any], cluster: str = cluster) -> None:
            if others is not None:
                others(docs)
            if cluster == "hq" and hq is not None:
                hq(docs)
        out[cluster] = edited(tmp_path, cluster, change)
    return out


def members_of(fabric: Path) -> list[tuple[str, str]]:
    from ruamel.yaml import YAML

    doc = YAML(typ="safe").load(fabric.read_text())
    return [(m["node"], m["address"]) for m in doc["interconnection"]["database"]["members"]]


def test_one_ic_db_host_on_a_three_member_install_declares_all_three(tmp_path: Path) -> None:
    """The issue's case: `ic-db-host: 10.10.10.11` on a three-member install. Import used to declare
    one member and call the round trip exact, its IC server `replicas: 1`: applying it left one of
    three raft members. Now the members are NODE_IPS, and ic-db-host is kept as it is in
    `database.hosts` (a change of it would rebuild every zone's interconnection), with FG115
    saying what naming one member costs."""
    fabric = site(tmp_path)
    code, doc, err = proof(fabric, clusters_with(tmp_path, None, one_host))
    assert members_of(fabric) == [("hq-node-1", "10.10.10.11"), ("hq-node-2", "10.10.10.12"),
                                  ("hq-node-3", "10.10.10.13")]
    text = fabric.read_text()
    assert "# from the IC server's Deployment (NODE_IPS)" in text
    assert 'hosts: ["10.10.10.11"]' in text and "# ic-db-host, as every zone's ovn-ic-config has it" in text
    assert entries(doc)[IC_SERVER]["status"] == "imported", entries(doc)[IC_SERVER]
    assert entries(doc)[IC_CONFIG]["status"] == "imported", entries(doc)[IC_CONFIG]
    assert any("ic-db-host names 1 of the 3 IC database members that run" in n for n in doc["notes"])
    assert [d["code"] for d in doc["diagnostics"]] == ["FG115"]
    assert code == 0 and doc["exact"], err
    assert main(["render", str(fabric), "-o", str(tmp_path / "rendered"), "-q"]) == 3
    server = find(documents(tmp_path / "rendered" / "lab" / "hq" / "stage-0" / "ic-server.yaml"),
                  "Deployment", "ovn-ic-server")
    assert server["spec"]["replicas"] == 3


def test_a_host_named_or_ipv6_ic_database_is_read_as_kube_ovn_writes_it(tmp_path: Path) -> None:
    """ic-db-host as a DNS name in front of the members, and an IPv6 install (NODE_IPS of IPv6
    InternalIPs): both were refused or half read. Now the name is kept in `hosts` and the IPv6
    members are declared; the rendered ovn-ic-config and IC server say what runs."""
    v6 = ["fd00:10::11", "fd00:10::12", "fd00:10::13"]

    def ipv6(docs: list[Any]) -> None:
        find(docs, "ConfigMap", "ovn-ic-config")["data"]["ic-db-host"] = "ic-db.hq.example"
        if any(i["kind"] == "Deployment" for i in items(docs)):
            server_env(docs)["NODE_IPS"]["value"] = ",".join(v6)
            for n, address in enumerate(v6, start=1):
                node = find(docs, "Node", f"hq-node-{n}")
                node["status"]["addresses"][0]["address"] = address

    fabric = site(tmp_path)
    code, doc, err = proof(fabric, clusters_with(tmp_path, None, ipv6))
    assert members_of(fabric) == [(f"hq-node-{n}", a) for n, a in enumerate(v6, start=1)]
    assert 'hosts: [ic-db.hq.example]' in fabric.read_text()
    assert entries(doc)[IC_CONFIG]["status"] == "imported"
    assert entries(doc)[IC_SERVER]["status"] == "imported"
    assert code == 0 and doc["exact"], err


def test_without_the_ic_server_captured_no_ic_server_is_rendered(tmp_path: Path) -> None:
    """Neither the Deployment nor a server list: how many members run is not known, so the fabric
    leaves `database.zone` out and renders no IC server, which therefore cannot stop a member; the
    document and the notes say how to let fabricgen run it."""
    fabric = site(tmp_path)
    code, doc, err = proof(fabric, clusters_with(tmp_path, without_ic_server, one_host))
    text = fabric.read_text()
    assert "zone: hq" not in text
    assert "# database.zone is left out: the IC server's Deployment and raft server list were not" in text
    assert members_of(fabric) == [("hq-node-1", "10.10.10.11")]
    assert any("database.zone is left out" in n for n in doc["notes"])
    assert IC_SERVER not in entries(doc)
    assert main(["render", str(fabric), "-o", str(tmp_path / "rendered"), "-q"]) == 3
    assert not list((tmp_path / "rendered").rglob("ic-server.yaml"))
    assert code in (0, 3), err


def test_replicas_below_node_ips_is_a_conflict(tmp_path: Path) -> None:
    """Scaled down by hand to one pod while NODE_IPS names three: the raft cluster still counts three
    and has no quorum; the fabric declares the three, and the IC server is a conflict saying so."""
    def scaled(docs: list[Any]) -> None:
        find(docs, "Deployment", "ovn-ic-server")["spec"]["replicas"] = 1

    fabric = site(tmp_path)
    code, doc, _err = proof(fabric, clusters_with(tmp_path, scaled))
    assert len(members_of(fabric)) == 3
    server = entries(doc)[IC_SERVER]
    assert server["status"] == "conflict"
    assert "replicas 1 where NODE_IPS names 3 members" in server["reason"]
    assert code == 3


def test_the_live_image_and_leader_probe_are_kept(tmp_path: Path) -> None:
    """install-ic-server.sh's `VERSION` left at its default (v1.13.0) and a probe interval of 7:
    the fabric keeps both, so applying it changes neither, and the round trip is exact."""
    def older(docs: list[Any]) -> None:
        server = find(docs, "Deployment", "ovn-ic-server")
        for container in (*server["spec"]["template"]["spec"]["containers"],
                          *server["spec"]["template"]["spec"]["initContainers"]):
            container["image"] = "kubeovn/kube-ovn:v1.13.0"
        server_env(docs)["OVN_LEADER_PROBE_INTERVAL"]["value"] = "7"

    fabric = site(tmp_path)
    code, doc, err = proof(fabric, clusters_with(tmp_path, older))
    text = fabric.read_text()
    assert 'image: "kubeovn/kube-ovn:v1.13.0"' in text and "leaderProbeInterval: 7" in text
    assert entries(doc)[IC_SERVER]["status"] == "imported"
    assert code == 0 and doc["exact"], err


def test_an_ssl_ic_server_is_not_exact(tmp_path: Path) -> None:
    """`ENABLE_SSL=true` live, which fabricgen's IC server does not run: partial, the difference named."""
    def ssl(docs: list[Any]) -> None:
        server_env(docs)["ENABLE_SSL"]["value"] = "true"

    fabric = site(tmp_path)
    code, doc, _err = proof(fabric, clusters_with(tmp_path, ssl))
    server = entries(doc)[IC_SERVER]
    assert server["status"] == "partial"
    assert [(d["path"], d["rendered"], d["live"]) for d in server["differences"]] == [
        ("spec.template.spec.containers[name=ovn-ic-server].env[name=ENABLE_SSL].value", "false", "true")]
    assert code == 3


def test_a_second_ic_server_is_a_conflict(tmp_path: Path) -> None:
    def also(docs: list[Any]) -> None:
        docs.append(live_cluster.ic_server("ai", ["10.10.20.11"], ts_num=1))

    clusters: dict[str, Path | list[Path]] = dict(CLUSTERS)
    clusters["ai"] = edited(tmp_path, "ai", also)
    code, doc, _err = proof(site(tmp_path), clusters)
    assert entries(doc)[("ai", "Deployment: kube-system/ovn-ic-server")]["status"] == "conflict"
    assert code == 3


# ---------------------------------------------------------------- the raft server list, from real OVN
def _param() -> Any:
    from fabricgen.lab.ovn.programs import Programs

    programs = Programs.from_environment()
    gone = missing(programs)
    return pytest.param(programs, marks=pytest.mark.skipif(bool(gone), reason=f"OVN programs missing: {gone}"))


@pytest.fixture(scope="module", params=[_param()])
def ic_raft(request: pytest.FixtureRequest) -> str:
    """`cluster/status OVN_IC_Northbound` of the first member of a real three-member IC database
    started as start-ic-db.sh starts it, its pods' loopback addresses written as the lab's nodes'
    (10.10.10.11-13) so that the captured Nodes name them."""
    import os

    programs = request.param
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = programs.search_path()
    try:
        with KubeOvnDatabase(programs) as db:
            db.create()
            text = db.status("node-1")
            for pod, address in zip(db.pods.values(), MEMBERS, strict=True):
                text = text.replace(f"[{pod.ip}]", f"[{address}]")
            return text
    finally:
        os.environ["PATH"] = path


def run_with_raft(fabric: Path, clusters: dict[str, Path | list[Path]], raft: Path) -> tuple[int, dict[str, Any], str]:
    import io
    from contextlib import redirect_stderr, redirect_stdout

    args = ["import", str(fabric), "--show", str(SHOW), "--ic-nb-options", str(OPTIONS), "--ic-raft", str(raft),
            "--format", "json"]
    for name, path in clusters.items():
        args += ["--cluster", f"{name}={path}"]
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(args)
    return code, json.loads(out.getvalue()), err.getvalue()


@pytest.mark.lab
def test_the_raft_server_list_names_the_members(tmp_path: Path, ic_raft: str) -> None:
    """No Deployment captured, ic-db-host one address, and one member's `cluster/status`: its server
    list holds three, so the fabric declares three and runs the IC server where their Nodes are."""
    assert ic_raft.count(" at tcp:[10.10.10.1") == 3, ic_raft
    raft = tmp_path / "ic-raft.txt"
    raft.write_text(ic_raft)
    fabric = site(tmp_path)
    code, doc, err = run_with_raft(fabric, clusters_with(tmp_path, without_ic_server, one_host), raft)
    assert len(members_of(fabric)) == 3, fabric.read_text()
    assert "zone: hq" in fabric.read_text()
    assert "# from the raft server list" in fabric.read_text()
    assert entries(doc)[IC_SERVER]["status"] == "added"  # fabricgen's own, with the three members
    assert code == 0 and doc["exact"], err  # ic-db-host kept in database.hosts


@pytest.mark.lab
def test_a_raft_member_node_ips_does_not_name_is_declared_and_a_conflict(tmp_path: Path, ic_raft: str) -> None:
    """NODE_IPS names two of the three members the server list holds (a node lost its master
    label after it joined): the fabric declares all three, so none is stopped, and says why."""
    def two(docs: list[Any]) -> None:
        find(docs, "Deployment", "ovn-ic-server")["spec"]["replicas"] = 2
        server_env(docs)["NODE_IPS"]["value"] = ",".join(MEMBERS[:2])

    raft = tmp_path / "ic-raft.txt"
    raft.write_text(ic_raft)
    fabric = site(tmp_path)
    code, doc, _err = run_with_raft(fabric, clusters_with(tmp_path, two), raft)
    assert [a for _n, a in members_of(fabric)] == MEMBERS
    server = entries(doc)[IC_SERVER]
    assert server["status"] == "conflict"
    assert "the raft server list" in server["reason"] and "name other members" in server["reason"]
    assert code == 3


def test_the_status_capture_carries_the_ic_server(tmp_path: Path) -> None:
    """`status --capture` reads kube-system/ovn-ic-server in every zone, so `import --from` of it
    sees the members too (the draft fabric may say nothing of where the IC server runs)."""
    from fabricgen.observe import live_fabric

    assert "deployments.apps/ovn-ic-server" in live_fabric.NAMED
    build = build_file(REPO / "sites" / "lab" / "fabric.yaml")
    from fabricgen.render.watch import named_reads

    for zone in build.plan.zones:  # the exporter may read it in every zone
        assert named_reads(build.plan, zone)["apps"] == ("deployments",)


def test_captures_are_the_upstream_forms() -> None:
    """The committed hq capture holds install-ic-server.sh's Deployment as the model writes it."""
    docs = documents(CLUSTERS["hq"])
    server = find(docs, "Deployment", "ovn-ic-server")
    assert server["spec"]["template"]["spec"]["nodeSelector"]["kube-ovn/role"] == "master"
    assert server_env(docs)["NODE_IPS"]["value"] == ",".join(MEMBERS)
    assert len([i for i in items(docs) if i["kind"] == "Deployment"]) == 1
