"""Every rendered Kubernetes object against the schema of its API.

- kubeovn.io kinds: the `openAPIV3Schema` of the upstream CRD vendored in tests/crds/,
  made strict (unknown fields rejected, as `kubectl apply --validate=strict` does; the API
  server would otherwise drop them silently).
- Core kinds (ConfigMap, Deployment, Job, ...): the Kubernetes OpenAPI schemas that the
  `kubernetes-validate` package ships, in strict mode.
- kubeovn.io kinds whose CRD is not in the reference (IptablesSnatRule, IptablesDnatRule):
  a strict schema written here from their Go spec types (`pkg/apis/kubeovn/v1`), every field
  a string, as the CRDs declare them.
- NetworkAttachmentDefinition: its CRD shape (spec.config, a string) and the CNI config
  inside it (kube-ovn for overlay networks and for SUSE Virtualization's external network of
  VPC NAT gateways, macvlan with kube-ovn IPAM for that network on plain Kube-OVN).

Objects are read back from the files on disk: `rendered/` and the golden expected trees.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from support.crds import LOADER, crd_schema, crd_validator
from support.fabrics import REPO

K8S_VERSION = "1.33"  # SUSE Virtualization 1.6+ / RKE2 of the lab's generation


def zone_dirs() -> list[Path]:
    roots = [REPO / "rendered", *sorted((REPO / "tests" / "golden").glob("*/expected"))]
    return sorted(p.parent for root in roots for p in root.glob("*/*/kustomization.yaml"))


ZONE_DIRS = zone_dirs()


def zone_id(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


@cache
def objects(zone_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    """(file name, object) for every document of every file the kustomization lists (do not mutate)."""
    kustomization = yaml.safe_load((zone_dir / "kustomization.yaml").read_text(encoding="utf-8"))
    out = []
    for name in kustomization["resources"]:
        if (zone_dir / name).is_dir():  # a stage directory
            out += [(f"{name}/{inner}", doc) for inner, doc in objects(zone_dir / name)]
            continue
        for doc in yaml.load_all((zone_dir / name).read_text(encoding="utf-8"), Loader=LOADER):
            if doc is not None:
                out.append((name, doc))
    return out


# The upstream NetworkAttachmentDefinition CRD (k8snetworkplumbingwg) declares
# spec.config as a string and nothing else.
NAD_SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "k8s.cni.cncf.io/v1"},
        "kind": {"const": "NetworkAttachmentDefinition"},
        "metadata": {"type": "object", "required": ["name", "namespace"]},
        "spec": {
            "type": "object",
            "properties": {"config": {"type": "string"}},
            "required": ["config"],
            "additionalProperties": False,
        },
    },
    "additionalProperties": False,
}


def _spec_only(fields: list[str], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    spec = {
        "type": "object",
        "properties": {f: {"type": "string"} for f in fields},
        "required": [f for f in fields if f not in optional],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                       "metadata": {"type": "object", "required": ["name"]}, "spec": spec},
        "additionalProperties": False,
    }


# Kinds the reference has no CRD for: the v1.16 spec types, IptablesSnatRuleSpec and IptablesDnatRuleSpec.
SPEC_ONLY_SCHEMAS = {
    ("kubeovn.io/v1", "IptablesSnatRule"): _spec_only(["eip", "internalCIDR"]),
    ("kubeovn.io/v1", "IptablesDnatRule"): _spec_only(
        ["eip", "externalPort", "protocol", "internalIp", "internalPort"], optional=("protocol",)),
}


@cache
def core_validator(api_version: str, kind: str) -> jsonschema.protocols.Validator:
    """The strict schema kubernetes-validate ships for this Kubernetes version (cached: it is large)."""
    import importlib.resources
    import re

    from referencing import Registry, Resource

    schemas = importlib.resources.files("kubernetes_validate") / "kubernetes-json-schema"
    base = schemas / f"v{K8S_VERSION}.0-local-strict"
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)  # apps/v1 -> apps-v1, v1 -> v1
    schema_file = base / f"{kind.lower()}-{group_version}.json"
    if not schema_file.is_file():
        pytest.fail(f"no Kubernetes {K8S_VERSION} schema for {api_version} {kind}; "
                    "add one to tests/render/test_k8s_schemas.py")
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    definitions = json.loads((base / "_definitions.json").read_text(encoding="utf-8"))
    registry: Registry[Any] = Resource.from_contents(definitions) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.Draft202012Validator(schema, registry=registry)


def validate_core(obj: dict[str, Any]) -> None:
    core_validator(obj["apiVersion"], obj["kind"]).validate(obj)


def validate_object(obj: dict[str, Any]) -> None:
    api_version, kind = obj["apiVersion"], obj["kind"]
    if (api_version, kind) in SPEC_ONLY_SCHEMAS:
        jsonschema.validate(obj, SPEC_ONLY_SCHEMAS[(api_version, kind)])
    elif api_version.startswith(("kubeovn.io/", "policy.networking.k8s.io/")):
        crd_validator(api_version, kind).validate(obj)
    elif api_version == "k8s.cni.cncf.io/v1":
        jsonschema.validate(obj, NAD_SCHEMA)
    else:
        validate_core(obj)


def test_zone_dirs_found() -> None:
    assert any(p.parts[-3:-1] == ("rendered", "lab") for p in ZONE_DIRS)
    assert len(ZONE_DIRS) >= 10


@pytest.mark.parametrize("zone_dir", ZONE_DIRS, ids=zone_id)
def test_objects_match_their_schemas(zone_dir: Path) -> None:
    for name, obj in objects(zone_dir):
        try:
            validate_object(obj)
        except jsonschema.ValidationError as exc:
            pytest.fail(f"{name}: {obj['kind']} {obj['metadata'].get('name')}: {exc.message} "
                        f"at {list(exc.absolute_path)}")


@pytest.mark.parametrize("zone_dir", ZONE_DIRS, ids=zone_id)
def test_nad_config_matches_subnet_provider(zone_dir: Path) -> None:
    objs = [obj for _name, obj in objects(zone_dir)]
    nads = [o for o in objs if o["kind"] == "NetworkAttachmentDefinition"]
    providers = {o["spec"]["provider"] for o in objs if o["kind"] == "Subnet"}
    nad_providers = set()
    for nad in nads:
        meta = nad["metadata"]
        config = json.loads(nad["spec"]["config"])
        assert config["name"] == meta["name"]
        assert config["cniVersion"]
        if config["type"] == "macvlan":
            # The external network of VPC NAT gateways: Kube-OVN IPAM only, provider <nad>.<namespace>.
            assert meta == {**meta, "name": "ovn-vpc-external-network", "namespace": "kube-system"}
            assert config["master"] and config["mode"] == "bridge"
            config = config["ipam"]
            expected = f"{meta['name']}.{meta['namespace']}"
        else:
            assert config["type"] == "kube-ovn"
            expected = f"{meta['name']}.{meta['namespace']}.ovn"
        assert config["provider"] == expected
        assert config["server_socket"] == "/run/openvswitch/kube-ovn-daemon.sock"
        assert expected in providers, f"no Subnet has provider {expected}"
        nad_providers.add(expected)
    assert providers <= nad_providers


@pytest.mark.parametrize("zone_dir", ZONE_DIRS, ids=zone_id)
def test_ic_routes_patch_matches_vpc_schema(zone_dir: Path) -> None:
    """ic-routes-<zone>.json is a merge patch for ovn-cluster: its spec is a valid Vpc spec."""
    patch_file = zone_dir / f"ic-routes-{zone_dir.name}.json"
    if not any(n.endswith("/ovn-ic-config.yaml") for n, _o in objects(zone_dir)):
        assert not patch_file.exists()
        return  # not a Kube-OVN interconnection zone
    patch = json.loads(patch_file.read_text(encoding="utf-8"))
    schema = crd_schema("kubeovn.io/v1", "Vpc")
    jsonschema.Draft7Validator(schema["properties"]["spec"]).validate(patch["spec"])
    routes = [o for _n, o in objects(zone_dir) if o["kind"] == "Vpc" and o["metadata"]["name"] == "ovn-cluster"]
    assert len(routes) == 1
    assert patch["spec"] == routes[0]["spec"]


def test_ovn_ic_config_values_are_strings() -> None:
    for zone_dir in ZONE_DIRS:
        for _name, obj in objects(zone_dir):
            if obj["kind"] == "ConfigMap" and obj["metadata"]["name"] == "ovn-ic-config":
                assert set(obj["data"]) == {"enable-ic", "az-name", "ic-db-host", "ic-nb-port", "ic-sb-port",
                                            "gw-nodes", "auto-route"}
                assert all(isinstance(v, str) for v in obj["data"].values())


# The validators must be able to fail: a typo'd field and a wrong type are caught.

def lab_object(kind: str, name: str) -> dict[str, Any]:
    for site in ("lab", "nat"):
        zone = REPO / "rendered" / site / "hq"
        found = [o for _n, o in objects(zone) if o["kind"] == kind and o["metadata"]["name"] == name]
        if found:
            return copy.deepcopy(found[0])
    raise AssertionError(f"no {kind} {name} in rendered/lab/hq or rendered/nat/hq")


@pytest.mark.parametrize(("kind", "name", "path", "value"), [
    ("Vpc", "ovn-cluster", ("spec", "staticRoutes", 0, "nexthopIP"), "169.254.100.23"),
    ("Vpc", "ovn-cluster", ("spec", "policyRoutes", 0, "priority"), "31000"),
    ("Subnet", "backbone-hq", ("spec", "enableDhcp"), True),
    ("Configuration", "kubeovn", ("spec", "components", "enableIc"), True),
    ("ConfigMap", "ovn-ic-config", ("data", "ic-nb-port"), 6645),
    ("Deployment", "ovn-ic-server", ("spec", "replica"), 3),
    ("NetworkAttachmentDefinition", "vsw-backbone", ("spec", "configs"), "{}"),
    ("VpcNatGateway", "gw-prod", ("spec", "lanIP"), "10.210.1.254"),
    ("IptablesEIP", "eip-prod", ("spec", "natGwDP"), "gw-prod"),
    ("IptablesSnatRule", "snat-prod-app", ("spec", "internalCidr"), "10.210.1.0/24"),
    ("IptablesDnatRule", "dnat-prod-https", ("spec", "externalPort"), 443),
    ("Subnet", "ovn-vpc-external-network", ("spec", "excludeIps"), "203.0.113.1"),
    ("ConfigMap", "ovn-vpc-nat-gw-config", ("data", "enable-vpc-nat-gw"), True),
])
def test_validators_reject_bad_fields(kind: str, name: str, path: tuple[str | int, ...], value: object) -> None:
    obj = lab_object(kind, name)
    node: Any = obj
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        validate_object(obj)


def test_nat_gateway_kinds_are_covered() -> None:
    """The NAT gateway sample renders every kind, so the schema tests above see each one."""
    kinds = {o["kind"] for _n, o in objects(REPO / "rendered" / "nat" / "hq")}
    assert {"VpcNatGateway", "IptablesEIP", "IptablesSnatRule", "IptablesDnatRule", "Subnet",
            "NetworkAttachmentDefinition", "ConfigMap", "Vpc", "Configuration", "ProviderNetwork",
            "Vlan"} <= kinds


def test_nat_zone_turns_the_feature_on() -> None:
    """A zone with NAT gateways enables them in the Configuration and routes its VPC through lanIp."""
    objs = [o for _n, o in objects(REPO / "rendered" / "nat" / "hq")]
    config = next(o for o in objs if o["kind"] == "Configuration")
    assert config["spec"]["components"]["enableNATGateway"] is True
    gateway = next(o for o in objs if o["kind"] == "VpcNatGateway")
    vpc = next(o for o in objs if o["kind"] == "Vpc" and o["metadata"]["name"] == gateway["spec"]["vpc"])
    route = vpc["spec"]["staticRoutes"][-1]
    assert (route["cidr"], route["nextHopIP"]) == ("0.0.0.0/0", gateway["spec"]["lanIp"])
    lab = [o for _n, o in objects(REPO / "rendered" / "lab" / "hq") if o["kind"] == "Configuration"]
    assert "enableNATGateway" not in lab[0]["spec"]["components"]


def test_nat_tenant_subnet_gets_dns_from_dhcp() -> None:
    """Behind a NAT gateway: DHCP with the DNS server, natOutgoing off (the gateway SNATs)."""
    objs = [o for _n, o in objects(REPO / "rendered" / "nat" / "hq")]
    subnet = next(o for o in objs if o["kind"] == "Subnet" and o["metadata"]["name"] == "prod-app")
    assert subnet["spec"]["enableDHCP"] is True
    assert subnet["spec"]["natOutgoing"] is False
    assert subnet["spec"]["dhcpV4Options"] == "dns_server={198.51.100.53}"


def test_dns_servers_need_dhcp() -> None:
    from fabricgen.errors import InvalidFabricError
    from fabricgen.pipeline import load_text

    text = (REPO / "sites" / "nat" / "fabric.yaml").read_text(encoding="utf-8")
    broken = text.replace("dnsServers: [198.51.100.53]", "dnsServers: [198.51.100.53, 198.51.100.54]\n"
                          "            dhcp: false", 1)
    with pytest.raises(InvalidFabricError) as exc:
        load_text(broken, "sites/nat/fabric.yaml")
    assert any("set dhcp: true or drop dnsServers" in d.message for d in exc.value.diagnostics)
