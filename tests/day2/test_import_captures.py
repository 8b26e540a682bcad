"""`fabricgen import` of what a cluster may hand it: any edit of a capture gets an answer, never a
crash; the documented capture commands fetch every kind import reads; interconnections of several
transit switches, tenant subnets, and Kube-OVN's own policy objects kept and named. The captures
and helpers are test_import.py's."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from test_import import (
    CLUSTERS,
    LAB_NEXT_HOPS,
    OPTIONS,
    SHOW,
    documents,
    edited,
    entries,
    find,
    proof,
    run_import,
    site,
    write_docs,
)

from fabricgen.cli import main
from support.fabrics import REPO, build_file, build_text, edit


# ---------------------------------------------------------------- any capture: an answer, never a crash
def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*at, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _paths(item, (*at, i))
    return out


def _replace(value: Any, at: tuple[Any, ...], new: Any) -> Any:
    if not at:
        return new
    value[at[0]] = _replace(value[at[0]], at[1:], new)
    return value


ODD = [None, 0, 7, True, "", "x", "10.0.0.1", "10.0.0.0/8", "a/b.c", "dr", "ovn-cluster", "169.254.100.23",
       [], {}, ["x"], {"a": 1}, "Ünïcode\u202e", "ip4.dst == 172.30.20.0/24", "backbone-dr.default.ovn"]


FUZZ_EXAMPLES = int(os.environ.get("FABRICGEN_FUZZ_EXAMPLES", "0"))


@pytest.mark.parametrize("cluster", ["dr", "hq"])
def test_any_edit_of_a_capture_gives_an_answer_never_a_crash(cluster: str) -> None:
    """Values of every kind at every place of a cluster's capture: import maps it (the proof says
    how it compares), or the fabric has located errors, or the input is refused with an error of its
    own; it never fails inside."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from fabricgen.adopt import document, inputs, mapping
    from fabricgen.adopt import proof as adopt_proof
    from fabricgen.errors import FabricgenError
    from fabricgen.source.reader import parse
    from fabricgen.validation.validator import validate

    docs = documents(CLUSTERS[cluster])
    paths = [p for p in _paths(docs) if p]
    texts = {name: path.read_text() for name, path in CLUSTERS.items() if name != cluster}

    outcomes: dict[str, int] = {}

    @settings(max_examples=FUZZ_EXAMPLES or 30, derandomize=True, database=None, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(st.tuples(st.sampled_from(paths), st.sampled_from(ODD)), min_size=1, max_size=4))
    def check(edits: list[tuple[tuple[Any, ...], Any]]) -> None:
        edited_docs = json.loads(json.dumps(docs))
        for at, value in edits:
            try:
                _replace(edited_docs, at, json.loads(json.dumps(value)))
            except (KeyError, IndexError, TypeError):
                continue
        capture = "".join(json.dumps(d) + "\n" for d in edited_docs)
        try:
            live = inputs.from_texts([*((n, [(n, t)]) for n, t in texts.items()), (cluster, [("c.json", capture)])],
                                     ("show.txt", SHOW.read_text()), ("options", OPTIONS.read_text()))
            imported = mapping.build(live, "lab")
        except FabricgenError:
            outcomes["refused"] = outcomes.get("refused", 0) + 1
            return
        text = document.text(imported, "../../schemas/fabric.schema.json", ["x"], "fabric.yaml")
        source, _found = parse(text, "fabric.yaml")
        assert source is not None
        model, diagnostics = validate(source)
        valid = model is not None and not any(d.is_error for d in diagnostics)
        result = adopt_proof.prove(imported, model, "fabric.yaml", valid=valid)
        outcome = "exact" if result.exact and valid else "invalid" if not valid else "not exact"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1

    check()
    assert outcomes.get("not exact", 0) + outcomes.get("invalid", 0) > 0, outcomes  # the edits reached the proof


def test_the_documented_capture_commands_fetch_every_kind_import_reads() -> None:
    """The kubectl commands of docs/status-and-import.md name exactly the kinds import reads
    (`adopt.inputs.KINDS`, Namespaces aside: their NADs say which exist), and so does what status
    captures for `import --from` (`observe.live_fabric.LISTED` and the objects it names), but for
    the kinds import only lists as kept on the cluster (`KEPT`)."""
    import re

    from fabricgen.adopt.inputs import KEPT, KINDS
    from fabricgen.observe import live_fabric as live

    text = (REPO / "docs" / "status-and-import.md").read_text(encoding="utf-8")
    commands = [line.strip() for line in text.splitlines() if line.strip().startswith('kubectl --context "$ctx"')]
    plurals = {v: k for k, v in live.RESOURCES.items()} | {
        "nodes": ("", "Node"), "helmcharts.helm.cattle.io": ("helm.cattle.io", "HelmChart"),
        "configmaps": ("", "ConfigMap"), "security-groups.kubeovn.io": ("kubeovn.io", "SecurityGroup")}
    named: set[tuple[str, str]] = set()
    for command in commands:
        words = command.split()
        resources = words[words.index("get") + 1]
        named |= {plurals[r] for r in resources.split(",")}
    wanted = set(KINDS) - {("", "Namespace")}
    assert named == wanted
    captured = {plurals[r] for r in live.LISTED} | {plurals[n.split("/")[0]] for n in live.NAMED} | \
        {plurals[live.CANAL.split("/")[0]]}
    assert captured == wanted - KEPT
    assert re.search(r"configmaps ovn-ic-config ovn-vpc-nat-gw-config", text)
    assert re.search(r"get deployments.apps ovn-ic-server --ignore-not-found", text)
    assert {n.split("/", 1)[1] for n in live.NAMED} == {"ovn-ic-config", "ovn-vpc-nat-gw-config", "ovn-ic-server"}


@pytest.fixture(scope="module")
def three_switches() -> str:
    """`ovn-ic-sbctl show` of the lab with three transit switches, as a default Kube-OVN install has
    them (`install-ic-server.sh` `TS_NUM=3`), read from the real IC southbound of the lab `verify`
    builds the way Kube-OVN does (tests/render/test_transit_switches.py): each zone with a port on `ts`,
    `ts1` and `ts2`, each bound to the first gateway of its rotated order."""
    from fabricgen.lab import assembly
    from fabricgen.lab.ovn.programs import Programs

    programs = Programs.from_environment()
    if programs.missing():
        pytest.skip(f"OVN programs missing ({', '.join(programs.missing())}): scripts/setup.sh --test")
    text = (REPO / "sites" / "lab" / "fabric.yaml").read_text()
    text = text.replace("    subnet: 169.254.100.0/24\n", "    subnet: 169.254.100.0/24\n    count: 3\n", 1)
    build = build_text(text, "sites/lab/fabric.yaml")
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = programs.search_path()
    try:
        with assembly.running(build, programs=programs) as lab:
            return lab.sandbox.icsb("show")
    finally:
        os.environ["PATH"] = path


@pytest.mark.lab
def test_a_three_switch_interconnection_keeps_every_switch(tmp_path: Path, three_switches: str) -> None:
    """Kube-OVN's IC server deletes every transit switch beyond its TS_NUM (`updateTS` in
    `pkg/ovn_leader_checker/ovn.go` runs `ovn-ic-nbctl ts-del`): an imported fabric of a
    three-switch interconnection keeps three, and its IC server runs TS_NUM=3."""
    show = tmp_path / "show.txt"
    show.write_text(three_switches)
    assert show.read_text().count("transit switch: ts1") == 4 and "port ts2-hq" in show.read_text()
    fabric = site(tmp_path)

    def ts_num_3(docs: list[Any]) -> None:  # install-ic-server.sh's default
        env = find(docs, "Deployment", "ovn-ic-server")["spec"]["template"]["spec"]["containers"][0]["env"]
        next(e for e in env if e["name"] == "TS_NUM")["value"] = "3"

    code, doc, err = proof(fabric, {**CLUSTERS, "hq": edited(tmp_path, "hq", ts_num_3)}, show=show)
    assert code == 0, err
    assert doc["exact"] and doc["valid"], doc
    text = fabric.read_text()
    assert re.search(r"\n    count: 3 +# the IC server's TS_NUM: as many as run, so none is deleted\n", text), text
    assert any("ports on 3 transit switches (ts, ts1, ts2): transitSwitch.count 3 keeps them all" in note
               for note in doc["notes"]), doc["notes"]
    assert main(["render", str(fabric), "-o", str(tmp_path / "rendered"), "-q"]) == 3
    rendered = tmp_path / "rendered" / "lab" / "hq" / "stage-0" / "ic-server.yaml"
    server = find(documents(rendered), "Deployment", "ovn-ic-server")
    env = {e["name"]: e.get("value") for e in server["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["TS_NUM"] == "3"
    # The routes still go over ts, the first switch.
    patch = json.loads((tmp_path / "rendered" / "lab" / "hq" / "ic-routes-hq.json").read_text())
    assert {r["cidr"]: r["nextHopIP"] for r in patch["spec"]["staticRoutes"]} == LAB_NEXT_HOPS


@pytest.mark.lab
def test_transit_switches_a_fabric_cannot_name_are_refused(tmp_path: Path, three_switches: str) -> None:
    show = tmp_path / "show.txt"
    show.write_text(three_switches.replace("transit switch: ts2", "transit switch: backup").replace("port ts2-",
                                                                                                  "port backup-"))
    fabric = site(tmp_path)
    code, out, err = run_import(fabric, dict(CLUSTERS), show)
    assert code == 1 and out == "", err
    assert "the fabric cannot name backup, so applying it could delete live switches" in err
    assert "ovn-ic-nbctl ts-del" in err and "nothing written" in err
    assert not fabric.exists()


@pytest.mark.lab
def test_status_names_live_transit_switches_the_fabric_would_delete(three_switches: str) -> None:
    """`status` of sites/lab (TS_NUM=1) against an IC database with three switches: drift naming
    the two that applying the fabric deletes; with count 3 nothing to say."""
    from fabricgen.judge.interconnection import _transit_switches
    from fabricgen.observe.icsb_show import parse

    show = parse(three_switches, "show.txt")
    build = build_file(REPO / "sites" / "lab" / "fabric.yaml")
    [check] = _transit_switches(build.plan.fabric, show)
    assert (check.name, check.verdict) == ("ic.transit-switches", "drift")
    assert "applying it deletes ts1, ts2 with their ports" in check.why
    assert "set interconnection.transitSwitch.count to 3" in check.fix
    text = (REPO / "sites" / "lab" / "fabric.yaml").read_text()
    three = build_text(text.replace("  transitSwitch:\n", "  transitSwitch:\n    count: 3\n", 1), "fabric.yaml")
    assert _transit_switches(three.plan.fabric, show) == []


def test_tenant_subnets_keep_their_namespaces_and_kube_ovns_gateway_type(tmp_path: Path) -> None:
    """What real clusters carry on a tenant Subnet: `namespaces` (user-set, so part of the fabric;
    each one of its VPC's) and `gatewayType: distributed`, which Kube-OVN reads only in the default
    VPC (`reconcileOvnDefaultVpcRoute`), so that outside it it is the same as none: exact."""
    def change(docs: list[Any]) -> None:
        find(docs, "Vpc", "vpc-prod")["spec"]["namespaces"] = ["prod"]
        subnet = find(docs, "Subnet", "prod-app")["spec"]
        subnet["namespaces"] = ["prod"]
        subnet["gatewayType"] = "distributed"

    clusters = {**CLUSTERS, "hq": edited(tmp_path, "hq", change)}
    fabric = site(tmp_path)
    code, doc, err = proof(fabric, clusters)
    assert code == 0, err
    assert doc["exact"] and doc["counts"]["partial"] == 0, [e for e in doc["entries"] if e["status"] == "partial"]
    text = fabric.read_text()
    assert re.search(r"\{name: prod-app, cidr: 10\.100\.2\.0/24, namespaces: \[prod\]", text) or \
        "namespaces: [prod]" in text.split("name: prod-app", 1)[1].split("name:", 1)[0], text
    assert main(["validate", str(fabric)]) == 0


@pytest.mark.lab
def test_status_names_live_transit_switches_an_ic_server_outside_the_zones_keeps(three_switches: str) -> None:
    """An IC database outside every zone (Kube-OVN's install-ic-server.sh, TS_NUM=3 by default) while
    the fabric models one: drift, saying verify and the checks cover ts alone and that nothing
    fabricgen renders deletes the others; with count 3 nothing to say."""
    from fabricgen.judge.interconnection import _transit_switches
    from fabricgen.observe.icsb_show import parse

    show = parse(three_switches, "show.txt")
    text = (REPO / "sites" / "lab" / "fabric.yaml").read_text()
    outside = edit(text, "    zone: hq                       # hq's cluster runs the IC database (ovn-ic-server)\n", "")
    [check] = _transit_switches(build_text(outside, "fabric.yaml").plan.fabric, show)
    assert (check.name, check.verdict) == ("ic.transit-switches", "drift")
    assert "the IC database has ports on 3 transit switches (ts, ts1, ts2) and the fabric models 1" in check.why
    assert "not ts1, ts2" in check.why and "nothing fabricgen renders deletes a switch" in check.why
    assert "set interconnection.transitSwitch.count to 3" in check.fix
    three = build_text(outside.replace("  transitSwitch:\n", "  transitSwitch:\n    count: 3\n", 1), "fabric.yaml")
    assert _transit_switches(three.plan.fabric, show) == []


def test_kube_ovns_own_policy_objects_are_kept_on_the_cluster_and_named(tmp_path: Path) -> None:
    """A SecurityGroup (kubeovn.io/v1, as Kube-OVN's `security-groups` CRD holds one) and a
    NetworkPolicy in hq's capture are read, listed as kept on the cluster with why the policy
    cannot say them, and change nothing in the fabric: import without them writes the same fabric
    (its comments name the capture files, which differ)."""
    plain = tmp_path / "plain" / "sites" / "lab" / "fabric.yaml"
    assert run_import(plain, dict(CLUSTERS))[0] == 0
    policy_objects = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "kubeovn.io/v1", "kind": "SecurityGroup", "metadata": {"name": "db"},
         "spec": {"ingressRules": [{"ipVersion": "ipv4", "protocol": "tcp", "priority": 10,
                                    "remoteType": "address", "remoteAddress": "10.100.2.0/24",
                                    "portRangeMin": 5432, "portRangeMax": 5432, "policy": "allow"}],
                  "allowSameGroupTraffic": True}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
         "metadata": {"name": "db-only-app", "namespace": "prod"},
         "spec": {"podSelector": {"matchLabels": {"app": "db"}}, "policyTypes": ["Ingress"],
                  "ingress": [{"from": [{"ipBlock": {"cidr": "10.100.2.0/24"}}]}]}}]}
    clusters: dict[str, Path | list[Path]] = {
        **CLUSTERS, "hq": [CLUSTERS["hq"], write_docs(tmp_path / "hq-policy.json", [policy_objects])]}
    code, doc, err = proof(site(tmp_path), clusters)
    assert code == 0 and doc["exact"], err
    found = entries(doc, "unmapped")
    group = found[("hq", "SecurityGroup: db")]["reason"]
    assert group.startswith("a Kube-OVN SecurityGroup, kept on the cluster as it is: its members are the pods that "
                            "name it in their ovn.kubernetes.io/security_groups annotation")
    netpol = found[("hq", "NetworkPolicy: prod/db-only-app")]["reason"]
    assert netpol.startswith("a NetworkPolicy, kept on the cluster as it is: in a Kube-OVN zone fabricgen renders "
                             "the policy as Subnet ACLs")
    from ruamel.yaml import YAML

    assert YAML(typ="safe").load(site(tmp_path).read_text()) == YAML(typ="safe").load(plain.read_text())
