"""`fabricgen.observe.kube_objects`: kubectl output read, normalised and compared field by field.

The reading tests use kubectl's printers where kubectl runs without a cluster (`kubectl label
--local -o json` prints each object as `kubectl get -o json` does); the List forms are those
kubectl's get command prints (kubernetes/kubectl `pkg/cmd/get/get.go`: several objects become
a `v1 List` with `metadata.resourceVersion: ""`) and the API server returns (`<Kind>List`,
items without apiVersion and kind).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fabricgen.judge import kube_compare
from fabricgen.observe import kube_objects as ko

SUBNET_LIVE: dict[str, Any] = {
    "apiVersion": "kubeovn.io/v1",
    "kind": "Subnet",
    "metadata": {
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": '{"kind":"Subnet"}'},
        "creationTimestamp": "2025-09-24T10:00:00Z",
        "finalizers": ["kubeovn.io/kube-ovn-controller"],
        "generation": 2,
        "managedFields": [{"manager": "kubectl-client-side-apply", "operation": "Update"}],
        "name": "backbone-hq",
        "resourceVersion": "48213",
        "uid": "6f1c9a52-1d1e-4c43-9b35-0b0d3c1f2a11",
    },
    "spec": {
        "cidrBlock": "172.30.10.0/24",
        "default": False,
        "enableDHCP": True,
        "enableLb": True,
        "excludeIps": ["172.30.10.1"],
        "gateway": "172.30.10.1",
        "gatewayNode": "",
        "gatewayType": "distributed",
        "natOutgoing": False,
        "private": False,
        "protocol": "IPv4",
        "provider": "vsw-backbone.default.ovn",
        "vpc": "ovn-cluster",
    },
    "status": {"v4availableIPs": 253, "v4usingIPs": 0, "conditions": [{"type": "Ready", "status": "True"}]},
}

SUBNET_RENDERED: dict[str, Any] = {
    "apiVersion": "kubeovn.io/v1",
    "kind": "Subnet",
    "metadata": {"name": "backbone-hq", "labels": {"app.kubernetes.io/managed-by": "fabricgen"},
                 "annotations": {"fabricgen.io/source": "sites/lab/fabric.yaml", "argocd.argoproj.io/sync-wave": "2"}},
    "spec": {"vpc": "ovn-cluster", "protocol": "IPv4", "provider": "vsw-backbone.default.ovn",
             "cidrBlock": "172.30.10.0/24", "gateway": "172.30.10.1", "enableDHCP": True, "natOutgoing": False},
}

PARTIAL = {"kustomize.toolkit.fluxcd.io/ssa": "Merge"}


def route(cidr: str, hop: str) -> dict[str, str]:
    return {"cidr": cidr, "nextHopIP": hop, "policy": "policyDst", "routeTable": "", "ecmpMode": "", "bfdId": ""}


def vpc(static: list[dict[str, Any]], policies: list[dict[str, Any]], *, partial: bool = True) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "ovn-cluster"}
    if partial:
        meta["annotations"] = dict(PARTIAL)
    return {"apiVersion": "kubeovn.io/v1", "kind": "Vpc", "metadata": meta,
            "spec": {"staticRoutes": static, "policyRoutes": policies}}


# ---------------------------------------------------------------- reading
def copy(value: Any) -> Any:
    """A deep copy that shares nothing (PyYAML writes a shared node as an anchor and aliases)."""
    return json.loads(json.dumps(value))


def kubectl_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def test_a_yaml_list_as_kubectl_get_prints_it() -> None:
    import yaml

    text = yaml.safe_dump(copy(kubectl_list([SUBNET_LIVE, {**SUBNET_LIVE, "metadata": {"name": "prod-db"}}])),
                          sort_keys=True)
    objects = ko.read_objects(text, "hq.yaml")
    assert [str(o.id) for o in objects] == ["Subnet: backbone-hq", "Subnet: prod-db"]
    assert objects[0].body == SUBNET_LIVE
    assert objects[0].origin == "hq.yaml:3" and objects[1].origin.startswith("hq.yaml:")
    assert objects[0].id == ko.ObjectId("kubeovn.io", "Subnet", "", "backbone-hq")


def test_a_kind_list_from_the_api_server_gives_its_items_their_kind() -> None:
    raw = {"apiVersion": "kubeovn.io/v1", "kind": "SubnetList", "metadata": {"resourceVersion": "9"},
           "items": [{"metadata": {"name": "join"}, "spec": {"cidrBlock": "100.64.0.0/16"}}]}
    (obj,) = ko.read_objects(json.dumps(raw), "subnets.json")
    assert obj.body["kind"] == "Subnet" and obj.body["apiVersion"] == "kubeovn.io/v1"
    assert obj.origin == "subnets.json: document 1, item 1"


def test_several_documents_and_several_json_values() -> None:
    import yaml

    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ovn-ic-config", "namespace": "kube-system"},
          "data": {"az-name": "hq"}}
    text = yaml.safe_dump(cm) + "---\n" + yaml.safe_dump(copy(kubectl_list([SUBNET_LIVE]))) + "---\n"
    assert [str(o.id) for o in ko.read_objects(text, "x.yaml")] == [
        "ConfigMap: kube-system/ovn-ic-config", "Subnet: backbone-hq"]
    joined = json.dumps(cm, indent=4) + "\n" + json.dumps(kubectl_list([SUBNET_LIVE]), indent=4) + "\n"
    assert [o.origin for o in ko.read_objects(joined, "x.json")] == ["x.json: document 1", "x.json: document 2, item 1"]


@pytest.mark.lab
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not on PATH")
def test_kubectls_own_json_printer_is_read(tmp_path: Path) -> None:
    """`kubectl label --local -o json` prints each object with the printer `kubectl get -o json` uses."""
    import yaml

    source = tmp_path / "objects.yaml"
    other = {**SUBNET_LIVE, "metadata": {**SUBNET_LIVE["metadata"], "name": "prod-db"}}
    source.write_text(yaml.safe_dump_all(copy([SUBNET_LIVE, other])))
    printed = subprocess.run(["kubectl", "label", "--local", "-f", str(source), "-o", "json", "seen=yes"],
                             capture_output=True, text=True, check=True, env={"KUBECONFIG": "/dev/null",
                                                                                "PATH": "/usr/bin:/bin"})
    objects = ko.read_objects(printed.stdout, "printed.json")
    assert [str(o.id) for o in objects] == ["Subnet: backbone-hq", "Subnet: prod-db"]
    assert ko.normalise(objects[0].body)["metadata"]["labels"] == {"seen": "yes"}
    assert kube_compare.compare(SUBNET_RENDERED, objects[0].body, fields="set").equal
    assert [d.describe() for d in kube_compare.compare(SUBNET_RENDERED, objects[0].body, fields="all").differences] == [
        'metadata.labels.seen: "yes" live, not set by the fabric']


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty"),
    ("NAME          PROVIDER   VPC\nbackbone-hq   ovn        ovn-cluster\n", "the table `kubectl get` prints"),
    ('Error from server (NotFound): subnets.kubeovn.io "x" not found\n', "a message of kubectl's"),
    ("error: the server doesn't have a resource type \"subnets\"\n", "a message of kubectl's"),
    ('{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "forbidden"}', "a Status"),
    ("- a\n- b\n", "a list, not a Kubernetes object or List"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: x}\n", "has no metadata.name"),
    ("kind: ConfigMap\nmetadata: {name: x}\n", "has no apiVersion"),
    ("apiVersion: v1\nkind: List\nitems: {a: 1}\n", "`items` of this List is a dict"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, labels: [a]}\n", "metadata.labels of another shape"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, annotations: {a: 1}, namespace: 3}\n",
     "metadata.annotations, metadata.namespace of another shape"),
    ("apiVersion: v1\nkind: List\nitems: [3]\n", "item 1 of the List is a number"),
    ("a: &x {b: 1}\nc: *x\n", "anchors and aliases"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: !thing {name: x}\n", "YAML tag !thing"),
    ("apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata: {name: x}\n", ":3: a mapping repeats a key"),
    ('{"apiVersion": "v1", "apiVersion": "v2"}', "repeats the key 'apiVersion'"),
    ("{\"a\": [}", "not JSON"),
    ("apiVersion: [\n", "not YAML"),
    ("a:" + " [" * 70 + " ]" * 70 + "\n", "nests deeper than 64 levels"),
])
def test_anything_else_is_refused_with_where_and_what(text: str, message: str) -> None:
    with pytest.raises(ko.KubeInputError) as caught:
        ko.read_objects(text, "in.yaml")
    assert message in str(caught.value)
    assert str(caught.value).startswith("in.yaml")


def test_a_capture_larger_than_the_limit_is_refused_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ko, "MAX_BYTES", 100)
    with pytest.raises(ko.KubeInputError, match="larger than"):
        ko.read_objects("apiVersion: v1\n" + "#" * 200, "big.yaml")


def test_merge_keeps_an_object_read_twice_and_refuses_two_versions() -> None:
    first = ko.read_objects(json.dumps(SUBNET_LIVE), "a.json")
    again = ko.read_objects(json.dumps({**SUBNET_LIVE, "status": {}}), "b.json")  # only status differs
    assert list(ko.merge_objects([*first, *again])) == [first[0].id]
    changed = ko.read_objects(json.dumps({**SUBNET_LIVE, "spec": {**SUBNET_LIVE["spec"], "natOutgoing": True}}),
                              "c.json")
    with pytest.raises(ko.KubeInputError, match=r"also at a\.json: document 1, with other content"):
        ko.merge_objects([*first, *changed])


# ---------------------------------------------------------------- identity and normalising
def test_identity_and_its_title() -> None:
    nad = {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition", "metadata": {"name": "n"}}
    assert ko.identify(nad) == ko.ObjectId("k8s.cni.cncf.io", "NetworkAttachmentDefinition", "default", "n")
    assert str(ko.identify(nad)) == "NetworkAttachmentDefinition: default/n"
    assert str(ko.identify(SUBNET_LIVE)) == "Subnet: backbone-hq"
    assert ko.identify({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "x"}}) == \
        ko.ObjectId("", "ConfigMap", "x", "c")


def test_normalise_drops_what_the_server_and_the_tools_add() -> None:
    live = {**SUBNET_LIVE, "metadata": {
        **SUBNET_LIVE["metadata"],
        "labels": {"ovn.kubernetes.io/vpc": "ovn-cluster", "app.kubernetes.io/instance": "fabric-lab-hq",
                   "kustomize.toolkit.fluxcd.io/name": "hq", "network.harvesterhci.io/ready": "true",
                   "team": "net", "app.kubernetes.io/managed-by": "fabricgen"},
        "annotations": {**SUBNET_LIVE["metadata"]["annotations"], "argocd.argoproj.io/tracking-id": "x",
                        "fabricgen.io/source": "sites/lab/fabric.yaml"},
        "ownerReferences": [{"kind": "Vpc", "name": "ovn-cluster"}],
    }}
    out = ko.normalise(live)
    assert out["metadata"] == {"name": "backbone-hq", "labels": {"team": "net"}}
    assert "status" not in out and out["spec"] == SUBNET_LIVE["spec"]
    assert live["metadata"]["labels"]["team"] == "net"  # the input is not changed


# ---------------------------------------------------------------- comparing
def test_a_subnet_as_the_controller_left_it_equals_the_rendered_one() -> None:
    """formatSubnet's defaults (gatewayType, enableLb, excludeIps, ...) are not differences."""
    assert kube_compare.compare(SUBNET_RENDERED, SUBNET_LIVE, fields="all").equal
    assert kube_compare.compare(SUBNET_RENDERED, SUBNET_LIVE, fields="set").equal


def test_changed_missing_and_extra_fields_are_named() -> None:
    live = {**SUBNET_LIVE,
            "metadata": {"name": "backbone-hq", "labels": {"team": "net"}},
            "spec": {**SUBNET_LIVE["spec"], "natOutgoing": True, "excludeIps": ["172.30.10.1", "172.30.10.9"],
                     "gatewayType": "centralized"}}
    del live["spec"]["enableDHCP"]
    comparison = kube_compare.compare(SUBNET_RENDERED, live, fields="all")
    found = {(d.kind, d.path): d for d in comparison.differences}
    assert set(found) == {("changed", "spec.natOutgoing"), ("missing", "spec.enableDHCP"),
                          ("extra", "spec.excludeIps"), ("extra", "spec.gatewayType"),
                          ("extra", "metadata.labels.team")}
    assert found[("changed", "spec.natOutgoing")].describe() == "spec.natOutgoing: false in the fabric, true live"
    assert found[("missing", "spec.enableDHCP")].as_dict() == {
        "path": "spec.enableDHCP", "at": ["spec", "enableDHCP"], "kind": "missing", "rendered": True}
    # on fabricgen's fields only, the hand-set label and fields fabricgen does not set are not compared
    only_set = kube_compare.compare(SUBNET_RENDERED, live, fields="set")
    assert {(d.kind, d.path) for d in only_set.differences} == {("changed", "spec.natOutgoing"),
                                                                 ("missing", "spec.enableDHCP")}


def test_zero_values_equal_absent_fields_in_kube_ovn_specs() -> None:
    """Kube-OVN writes objects back from Go structs: `enableDHCP: false` (omitempty) disappears."""
    rendered = {**SUBNET_RENDERED, "spec": {**SUBNET_RENDERED["spec"], "enableDHCP": False}}
    live = {**SUBNET_LIVE, "spec": {k: v for k, v in SUBNET_LIVE["spec"].items() if k != "enableDHCP"}}
    assert kube_compare.compare(rendered, live, fields="all").equal
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "kube-system"},
                  "data": {"auto-route": ""}}
    assert not kube_compare.compare(config_map, {**config_map, "data": {}}).equal  # not in a ConfigMap


def test_default_vpc_routes_are_compared_as_a_set_and_hand_added_ones_listed() -> None:
    rendered = vpc([route("172.30.20.0/24", "169.254.100.23"), route("172.30.30.0/24", "169.254.100.52")],
                   [{"action": "allow", "match": "ip4.dst == 172.30.20.0/24", "priority": 31000}])
    live = vpc([{"cidr": "172.30.30.0/24", "nextHopIP": "169.254.100.52", "policy": "policyDst"},  # as patched
                route("172.30.20.0/24", "169.254.100.99"),  # stale next hop
                route("10.200.0.0/16", "169.254.100.5")],  # added by hand
               [{"action": "allow", "match": "ip4.dst == 172.30.20.0/24", "priority": 31000}], partial=False)
    live["spec"]["enableExternal"] = True  # another controller's field of a partial object
    live["status"] = {"default": True, "router": "ovn-cluster"}
    comparison = kube_compare.compare(rendered, live, fields="all")
    assert comparison.fields == "set"
    assert [d.describe() for d in comparison.differences] == [
        'spec.staticRoutes[cidr=172.30.20.0/24].nextHopIP: "169.254.100.23" in the fabric, "169.254.100.99" live',
        'spec.staticRoutes[cidr=10.200.0.0/16]: {"cidr": "10.200.0.0/16", "nextHopIP": "169.254.100.5", '
        '"policy": "policyDst", "routeTable": "", "ecmpMode": "", "bfdId": ""} live, not set by the fabric',
    ]
    assert comparison.extra_items("spec", "staticRoutes") == [route("10.200.0.0/16", "169.254.100.5")]
    assert comparison.extra_items("spec", "policyRoutes") == []
    assert comparison.as_dict()["differences"][0]["at"] == [
        "spec", "staticRoutes", {"cidr": "172.30.20.0/24"}, "nextHopIP"]


def test_a_missing_route_and_a_missing_policy_are_named() -> None:
    rendered = vpc([route("172.30.20.0/24", "169.254.100.23")],
                   [{"action": "allow", "match": "ip4.dst == 172.30.20.0/24", "priority": 31000}])
    live = vpc([route("172.30.20.0/24", "169.254.100.23")], [], partial=False)
    del live["spec"]["policyRoutes"]  # omitempty: an empty list is not written back
    (difference,) = kube_compare.compare(rendered, live).differences
    assert difference.kind == "missing"
    assert difference.path == "spec.policyRoutes[priority=31000,match=ip4.dst == 172.30.20.0/24]"
    live["spec"]["policyRoutes"] = [{"action": "allow", "match": "ip4.dst == 172.30.30.0/24", "priority": 31000}]
    kinds = [(d.kind, d.path) for d in kube_compare.compare(rendered, live).differences]
    assert kinds == [("missing", "spec.policyRoutes[priority=31000,match=ip4.dst == 172.30.20.0/24]"),
                     ("extra", "spec.policyRoutes[priority=31000,match=ip4.dst == 172.30.30.0/24]")]


def test_a_partial_configuration_is_compared_on_fabricgens_fields_only() -> None:
    rendered = {"apiVersion": "kubeovn.io/v1", "kind": "Configuration",
                "metadata": {"name": "kubeovn", "namespace": "kube-system", "annotations": dict(PARTIAL)},
                "spec": {"components": {"enableIC": True}}}
    live = {"apiVersion": "kubeovn.io/v1", "kind": "Configuration",
            "metadata": {"name": "kubeovn", "namespace": "kube-system",
                         "finalizers": ["finalizer.kubeovn.io/configuration"]},
            "spec": {"components": {"enableIC": True, "enableLB": True, "enableNATGateway": True},
                     "networking": {"tunnelType": "vxlan"}, "ipv4": {"podCIDR": "10.54.0.0/16"}},
            "status": {"status": "Deployed"}}
    assert kube_compare.compare(rendered, live, fields="all").equal
    live["spec"]["components"]["enableIC"] = False
    (difference,) = kube_compare.compare(rendered, live, fields="all").differences
    assert difference.path == "spec.components.enableIC" and (difference.rendered, difference.live) == (True, False)


def test_nad_config_is_compared_as_json() -> None:
    config = {"cniVersion": "0.3.1", "name": "vsw-backbone", "type": "kube-ovn",
              "provider": "vsw-backbone.default.ovn", "server_socket": "/run/openvswitch/kube-ovn-daemon.sock"}
    rendered = {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
                "metadata": {"name": "vsw-backbone", "namespace": "default",
                             "labels": {"network.harvesterhci.io/type": "OverlayNetwork",
                                        "network.harvesterhci.io/clusternetwork": "mgmt"}},
                "spec": {"config": json.dumps(config, separators=(",", ":"))}}
    live = json.loads(json.dumps(rendered))
    live["metadata"]["labels"]["network.harvesterhci.io/ready"] = "true"
    live["spec"]["config"] = json.dumps(dict(reversed(config.items())), indent=2)
    assert kube_compare.compare(rendered, live, fields="all").equal
    live["spec"]["config"] = json.dumps({**config, "mtu": 1400})
    (difference,) = kube_compare.compare(rendered, live, fields="all").differences
    assert (difference.kind, difference.path, difference.live) == ("extra", "spec.config.mtu", 1400)


def test_allocated_and_defaulted_nat_fields_are_not_differences() -> None:
    rendered = {"apiVersion": "kubeovn.io/v1", "kind": "IptablesEIP", "metadata": {"name": "eip-web"},
                "spec": {"natGwDp": "gw-prod", "externalSubnet": "ovn-vpc-external-network", "v4ip": "192.168.50.10"}}
    live = json.loads(json.dumps(rendered))
    live["spec"].update(macAddress="00:00:00:4A:1B:2C", v6ip="", qosPolicy="")
    live["metadata"]["labels"] = {"ovn.kubernetes.io/eip_v4_ip": "192.168.50.10"}
    live["status"] = {"ready": True, "ip": "192.168.50.10"}
    assert kube_compare.compare(rendered, live, fields="all").equal
    live["spec"]["qosPolicy"] = "slow"
    assert [d.path for d in kube_compare.compare(rendered, live, fields="all").differences] == ["spec.qosPolicy"]


def test_lists_outside_kube_ovn_specs_keep_their_order() -> None:
    rendered = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "kube-system"},
                "spec": {"template": {"spec": {"containers": [{"name": "a", "command": ["x", "y"]}]}}}}
    live = json.loads(json.dumps(rendered))
    live["spec"]["template"]["spec"]["containers"][0]["command"] = ["y", "x"]
    paths = [d.path for d in kube_compare.compare(rendered, live).differences]
    assert paths == ["spec.template.spec.containers[0].command[0]", "spec.template.spec.containers[0].command[1]"]


def test_compare_refuses_two_different_objects() -> None:
    with pytest.raises(ValueError, match="is not"):
        kube_compare.compare(SUBNET_RENDERED, {**SUBNET_LIVE, "metadata": {"name": "other"}})


def test_a_live_object_without_the_section_names_each_missing_field() -> None:
    rendered = vpc([route("172.30.20.0/24", "169.254.100.23")], [])
    live = {"apiVersion": "kubeovn.io/v1", "kind": "Vpc", "metadata": {"name": "ovn-cluster"}, "status": {}}
    assert [(d.kind, d.path) for d in kube_compare.compare(rendered, live).differences] == [
        ("missing", "spec.staticRoutes[cidr=172.30.20.0/24]")]
    assert kube_compare.compare(vpc([], []), live).equal  # empty lists: what Kube-OVN writes as nothing


def test_a_list_of_scalars_names_its_items_by_value() -> None:
    live = {**SUBNET_LIVE, "spec": {**SUBNET_LIVE["spec"], "excludeIps": ["172.30.10.1", "172.30.10.9"]}}
    rendered = {**SUBNET_RENDERED, "spec": {**SUBNET_RENDERED["spec"], "excludeIps": ["172.30.10.1", "172.30.10.2"]}}
    found = [(d.kind, d.path, d.at[-1]) for d in kube_compare.compare(rendered, live).differences]
    assert found == [("missing", "spec.excludeIps[=172.30.10.2]", {"": "172.30.10.2"}),
                     ("extra", "spec.excludeIps[=172.30.10.9]", {"": "172.30.10.9"})]


def test_any_text_is_read_or_refused_never_a_crash() -> None:
    """Random text, and kubectl output with lines dropped or doubled: objects, or a KubeInputError."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from support.fabrics import REPO

    lines = (REPO / "tests" / "data" / "import" / "lab" / "edge.yaml").read_text().splitlines(keepends=True)[:400]

    @st.composite
    def damaged(draw: st.DrawFn) -> str:
        out = list(lines)
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, len(out) - 1))
            action = draw(st.sampled_from(["drop", "double", "indent", "cut"]))
            if action == "drop":
                del out[i]
            elif action == "double":
                out.insert(i, out[i])
            elif action == "indent":
                out[i] = " " + out[i]
            else:
                out[i] = out[i][: len(out[i]) // 2] + "\n"
        return "".join(out)

    examples = int(os.environ.get("FABRICGEN_FUZZ_EXAMPLES", "0")) or 60

    @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.one_of(damaged(), st.text(max_size=300), st.text(alphabet="{}[]:,-\"' \n\tab1&*!#", max_size=200)))
    def check(text: str) -> None:
        try:
            objects = ko.read_objects(text, "f.yaml")
        except ko.KubeInputError as exc:
            assert str(exc).startswith("f.yaml")
            return
        for obj in objects:
            assert kube_compare.compare(obj.body, obj.body, fields="all").equal

    check()


@pytest.mark.parametrize(("text", "said"), [
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &n x\n  namespace: *n\n", "(an anchor)"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: !!map {name: x}\n", "YAML tag tag:yaml.org,2002:map"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: !!str x}\n", "YAML tag tag:yaml.org,2002:str"),
])
def test_scalar_anchors_and_standard_tags_are_refused_too(text: str, said: str) -> None:
    """The loaded document keeps no trace of a scalar's anchor or a `!!map` tag: the event stream does."""
    with pytest.raises(ko.KubeInputError, match=re.escape(said)):
        ko.read_objects(text, "c.yaml")


def test_what_webhooks_and_controllers_fill_in_is_no_difference() -> None:
    """`enableLb: false` on every Subnet of a kube-ovn-controller run with `--enable-lb=false`,
    `affinity: {}` on a VpcNatGateway (VpcNatGatewaySpec.Affinity has no omitempty), and
    `gatewayType: distributed` on a tenant Subnet (read only in the default VPC): all compared with
    every field, none a difference."""
    import copy

    from support.fabrics import REPO, build_file

    build = build_file(REPO / "sites" / "nat" / "fabric.yaml")
    objects = [o for d in build.manifests for o in build.objects(d)]
    gateway = next(o for o in objects if o["kind"] == "VpcNatGateway")
    live = copy.deepcopy(gateway)
    live["spec"]["affinity"] = {}
    assert kube_compare.compare(gateway, live, fields="all").differences == ()
    subnet = next(o for o in objects if o["kind"] == "Subnet" and o["spec"].get("vpc", "ovn-cluster") != "ovn-cluster")
    live = copy.deepcopy(subnet)
    live["spec"] |= {"enableLb": False, "gatewayType": "distributed"}
    assert kube_compare.compare(subnet, live, fields="all").differences == ()
    live["spec"]["gatewayType"] = "centralized"
    assert [d.path for d in kube_compare.compare(subnet, live, fields="all").differences] == ["spec.gatewayType"]


@pytest.mark.parametrize("value", [".nan", ".inf", "-.Inf"])
def test_yaml_nan_and_infinity_are_refused(value: str) -> None:
    with pytest.raises(ko.KubeInputError, match="no Kubernetes object holds"):
        ko.read_objects(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: x, generation: {value}}}\n", "c.yaml")
