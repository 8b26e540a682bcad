"""The fabric's watch as workloads (`watch` in fabric.yaml): what the rendered exporter runs and
what its ServiceAccount may do, judged by the readers that decide them.

- RBAC: every request `fabricgen status` makes of a zone's cluster (the kubectl argument vectors
  of `observe.live_fabric`, read as the API requests kubectl sends) against the rendered
  ClusterRole and Role, evaluated as Kubernetes does (kubernetes/kubernetes
  `pkg/apis/rbac/v1/evaluation_helpers.go` `RuleAllows`: verb, API group, resource with its
  subresource, resource names), and nothing granted that no request needs.
- The entry point: the rendered Deployment's arguments after the Containerfile's ENTRYPOINT,
  run here with its mounts (the ConfigMap's fabric, a kubeconfig) where the pod has them:
  `/metrics` answers, the zones it cannot reach are series that say so, and the kubeconfig's
  token appears nowhere. No image builder runs here (no buildah, podman or Docker engine, and
  no registry for a base image), so the image itself is not built in the tests.
- The Containerfile against Debian 12's own package lists: the OVN and OVSDB tools status runs
  are in the packages it installs.
- The ServiceMonitor against the prometheus-operator CRD (tests/crds).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from fabricgen.observe import live_fabric
from fabricgen.observe import read_commands as cmd
from fabricgen.observe.sources import Endpoints, Kubectl, plan
from fabricgen.pipeline import Build
from fabricgen.render import watch
from support.fabrics import REPO, build_file, build_text, edit

LAB = REPO / "sites" / "lab" / "fabric.yaml"
CONTAINERFILE = REPO / "Containerfile"


def by_kind(build: Build, zone: str) -> dict[str, dict[str, Any]]:
    """The watch's objects rendered into a zone's directory, by kind."""
    return {obj["kind"]: obj for obj in build.objects_within(zone)
            if obj["metadata"]["name"] == watch.NAME}


def exporter_objects(build: Build) -> dict[str, dict[str, Any]]:
    """The exporter's objects (`_monitoring/watch.yaml`), by kind."""
    text = build.files[PurePosixPath(build.plan.site, "_monitoring", watch.EXPORTER_FILE)].text
    return {d["kind"]: d for d in yaml.safe_load_all(text) if d}


# ---------------------------------------------------------------- RBAC, as Kubernetes evaluates it
@dataclass(frozen=True)
class Request:
    verb: str
    group: str
    resource: str  # with its subresource: pods/exec
    namespace: str  # "" for cluster-scoped or every namespace
    name: str = ""


def _resource(text: str) -> tuple[str, str]:
    """`vpcs.kubeovn.io` -> (kubeovn.io, vpcs); `nodes` -> ("", nodes)."""
    resource, _, group = text.partition(".")
    return group, resource


def requests_of(argv: Sequence[str]) -> list[Request]:
    """The API requests one kubectl invocation of `fabricgen status` sends."""
    assert argv[0] == "kubectl", argv
    args = list(argv[1:])
    namespace = ""
    words: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("--context", "-n", "-l", "-o", "-c"):
            if arg == "-n":
                namespace = args[i + 1]
            i += 2
            continue
        if arg == "--":
            break
        if not arg.startswith("-"):
            words.append(arg)
        i += 1
    every = "--all-namespaces" in args
    if words[0] == "exec":
        # the pod, then its exec: a WebSocket upgrade, a GET (kubectl 1.30+), which Kubernetes 1.35
        # also authorizes as `create` (AuthorizePodWebsocketUpgradeCreatePermission, KEP-4006),
        # and `create` for SPDY's POST (kubernetes/kubernetes #133515)
        pod = words[1]
        return [Request("get", "", "pods", namespace, pod), Request("get", "", "pods/exec", namespace, pod),
                Request("create", "", "pods/exec", namespace, pod)]
    assert words[0] == "get", argv
    if every:
        group, resource = _resource(words[1])
        return [Request("list", group, resource, "")]
    if "-l" in args:
        return [Request("list", "", words[1], namespace)]
    out = []
    for named in words[1:]:
        kind, _, name = named.partition("/")
        group, resource = _resource(kind)
        out.append(Request("get", group, resource, namespace, name))
    return out


def allows(rule: Mapping[str, Any], request: Request) -> bool:
    """`RuleAllows` (kubernetes `pkg/apis/rbac/v1/evaluation_helpers.go`): VerbMatches,
    APIGroupMatches, ResourceMatches (`resource/subresource`, `*`), ResourceNameMatches."""
    def has(values: Sequence[str], value: str) -> bool:
        return "*" in values or value in values

    if not has(rule.get("verbs", []), request.verb) or not has(rule.get("apiGroups", []), request.group):
        return False
    resources = rule.get("resources", [])
    base = request.resource.split("/")[0]
    if not ("*" in resources or request.resource in resources
            or ("/" in request.resource and f"*/{request.resource.split('/', 1)[1]}" in resources)
            or ("/" not in request.resource and base in resources)):
        return False
    names = rule.get("resourceNames", [])
    return not names or request.name in names


def allowed(rendered: Mapping[str, dict[str, Any]], request: Request) -> bool:
    """By the ClusterRole (every namespace) or, in its namespace, the Role: each bound to the
    ServiceAccount (`plugin/pkg/auth/authorizer/rbac/rbac.go` visits both kinds of binding)."""
    account = {"kind": "ServiceAccount", "name": watch.NAME, "namespace": "kube-system"}
    for role_kind, binding_kind in (("ClusterRole", "ClusterRoleBinding"), ("Role", "RoleBinding")):
        binding, role = rendered[binding_kind], rendered[role_kind]
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind,
                                      "name": role["metadata"]["name"]}
        assert account in binding["subjects"]
        if role_kind == "Role" and request.namespace != role["metadata"]["namespace"]:
            continue
        if any(allows(rule, request) for rule in role["rules"]):
            return True
    return False


def status_requests(build: Build) -> dict[str, list[Request]]:
    """Per zone, every request `fabricgen status` makes of the zone's cluster: the first round,
    and the round inside the pods it finds (one ovn-central pod here; the IC server's in hq)."""
    sources = plan(build, Endpoints())
    out: dict[str, list[Request]] = {}
    for az in sources.azs:
        if not isinstance(az.access, Kubectl):
            continue
        probes = live_fabric._first_round(build, az, sources, policy=False)  # a zone: no security groups
        pod = live_fabric.Pod("ovn-central-5b8f9d7c4-x2x7q", "node-1", "10.0.0.1",
                              {"app": "ovn-central", "ovn-nb-leader": "true", "ovn-sb-leader": "true"}, True)
        probes += live_fabric._pod_round(az, [pod])
        out[az.name] = [r for p in probes for r in requests_of(p.argv)]
    if sources.ic is None or not isinstance(sources.ic.access, Kubectl):
        return out  # an IC database outside the zones is read directly, not through a cluster
    ic_pod = live_fabric.Pod("ovn-ic-server-6d9c7b5f8-k2v4z", "hq-node-1", "10.10.10.11",
                             {"app": "ovn-ic-server", "ovn-ic-nb-leader": "true"}, True)
    ic = [*live_fabric._ic_first_round(sources.ic, sources), *live_fabric._ic_pod_round(sources.ic, [ic_pod])]
    host = build.plan.fabric.interconnection.database.zone  # type: ignore[union-attr]
    assert host is not None
    out[host] += [r for p in ic for r in requests_of(p.argv)]
    return out


def with_watch(path: Path) -> Build:
    """The fabric at `path`, with a watch in its first zone when it has none."""
    text = path.read_text(encoding="utf-8")
    if "\nwatch:\n" not in text:
        first = re.search(r"^zones:\n  - name: (\S+)", text, re.MULTILINE)
        assert first is not None, path
        text += f"\nwatch:\n  image: registry.example/fabricgen:0.1.0\n  zone: {first.group(1)}\n"
    return build_text(text, path.relative_to(REPO).as_posix())


FABRICS = [LAB, REPO / "sites" / "nat" / "fabric.yaml",
           *sorted(p for p in (REPO / "tests" / "golden").glob("*/fabric.yaml"))]


@pytest.mark.parametrize("path", FABRICS, ids=lambda p: p.parent.name)
def test_every_request_status_makes_of_a_zone_is_allowed_and_nothing_else_is_granted(path: Path) -> None:
    build = with_watch(path)
    wanted = status_requests(build)
    assert set(wanted) == {z.name for z in build.plan.fabric.zones}
    for zone, requests in wanted.items():
        rendered = by_kind(build, zone)
        assert {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} <= set(rendered)
        refused = [r for r in requests if not allowed(rendered, r)]
        assert not refused, f"{zone}: {refused}"
        assert any(r.resource == "pods/exec" for r in requests)  # the OVN tools inside the pods
        # nothing more: every verb on every resource granted is one status uses in this zone
        used = {(r.verb, r.group, r.resource) for r in requests}
        granted = {(verb, group, resource) for kind in ("ClusterRole", "Role") for rule in rendered[kind]["rules"]
                   for verb in rule["verbs"] for group in rule["apiGroups"] for resource in rule["resources"]}
        unused = {g for g in granted if g not in used and not (g[0] == "get" and ("list", g[1], g[2]) in used)}
        assert not unused, (zone, unused)
        assert not any("*" in part for g in granted for part in g)
        assert not any(g[2] == "secrets" for g in granted)
        assert {g for g in granted if g[0] not in ("get", "list")} == {("create", "", "pods/exec")}
        assert ("get", "", "pods/exec") in granted
        assert rendered["Role"]["metadata"]["namespace"] == "kube-system"


def test_the_rbac_is_in_every_zone_and_the_exporter_never_in_a_zones_rollout() -> None:
    """The exporter is written to `_monitoring/watch.yaml`, in `kube-system` of its zone's
    cluster or in a namespace of its own: never into a zone's stages, whose later objects Argo CD
    and Flux hold until every earlier one is healthy (an image that cannot be pulled, a Secret
    not made yet)."""
    build = build_file(LAB)
    for zone in ("hq", "ai", "edge", "dr"):
        assert set(by_kind(build, zone)) == {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
                                             "RoleBinding"}, zone
    placed = exporter_objects(build)
    assert {k: d["metadata"].get("namespace", "") for k, d in placed.items()} == {
        "ConfigMap": "kube-system", "Deployment": "kube-system", "Service": "kube-system"}
    text = LAB.read_text()
    outside = build_text(edit(text, "  zone: hq\n  interval: 60", "  interval: 60"), "fabric.yaml")
    docs = list(exporter_objects(outside).values())
    assert [(d["kind"], d["metadata"].get("namespace", "")) for d in docs] == [
        ("Namespace", ""), ("ConfigMap", watch.OWN_NAMESPACE), ("Deployment", watch.OWN_NAMESPACE),
        ("Service", watch.OWN_NAMESPACE)]
    bare = build_text(re.sub(r"\nwatch:\n(?:  .*\n)+", "\n", text), "fabric.yaml")
    assert not any(obj for d in bare.manifests for obj in bare.objects(d) if obj["metadata"]["name"] == watch.NAME)
    assert not any(watch.NAME in str(path) or path.name == watch.SERVICE_MONITOR_FILE for path in bare.files)


def test_the_fabric_the_exporter_reads_is_the_fabric() -> None:
    """The ConfigMap's fabric.json (the validated model as JSON) reads back to the same model, so
    the exporter judges the fabric that was rendered; the pod template names its digest, so a
    changed fabric rolls the exporter."""
    build = build_file(LAB)
    rendered = exporter_objects(build)
    document = rendered["ConfigMap"]["data"][watch.FABRIC_KEY]
    assert build_text(document, "fabric.json").plan.fabric == build.plan.fabric
    import hashlib
    annotations = rendered["Deployment"]["spec"]["template"]["metadata"]["annotations"]
    assert annotations["fabricgen.io/fabric-sha256"] == hashlib.sha256(document.encode()).hexdigest()


# ---------------------------------------------------------------- the Containerfile
def containerfile() -> dict[str, str]:
    """The final stage's instructions (the last FROM onwards), by keyword (the last of each)."""
    lines = CONTAINERFILE.read_text().replace("\\\n", " ").splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith("FROM "))
    out: dict[str, str] = {}
    for line in lines[start:]:
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            out[keyword] = rest.strip()
    return out


def test_the_image_runs_what_the_deployment_asks_as_the_user_it_names() -> None:
    final = containerfile()
    assert json.loads(final["ENTRYPOINT"]) == ["fabricgen"]
    assert final["USER"] == f"{watch.USER}:{watch.USER}"
    assert final["EXPOSE"] == str(watch.PORT)
    deployment = exporter_objects(build_file(LAB))["Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["securityContext"]["runAsUser"] == watch.USER
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert {m["mountPath"] for m in container["volumeMounts"] if not m.get("readOnly")} == {"/tmp"}
    assert {"name": "HOME", "value": "/tmp"} in container["env"]  # kubectl's cache, the one write
    assert pod["automountServiceAccountToken"] is False
    for source in re.findall(r"^COPY (?!--from)(.+) /src/", CONTAINERFILE.read_text(), re.MULTILINE):
        for path in source.split():
            assert (REPO / path).exists(), path


@pytest.mark.lab
def test_the_image_has_the_tools_status_runs() -> None:
    """The OVN and OVSDB tools `observe.read_commands` runs are in the Debian 12 packages the
    Containerfile installs (their file lists as dpkg has them here, the same packages)."""
    installed = containerfile()["RUN"]
    packages = [p for p in ("ovn-common", "openvswitch-common") if p in installed.split()]
    assert packages == ["ovn-common", "openvswitch-common"]
    listed = subprocess.run(["dpkg", "-L", *packages], capture_output=True, text=True, check=False)
    if listed.returncode != 0:
        pytest.skip(f"dpkg does not list {packages} here: {listed.stderr.strip()}")
    files = {PurePosixPath(line).name for line in listed.stdout.splitlines() if line.startswith("/usr/bin/")}
    tools = set(cmd.TOOLS.values()) | {"ovn-appctl", "ovsdb-client"}
    assert tools <= files, tools - files
    assert "kubectl" in installed.split()


def test_the_service_monitor_is_what_the_operator_accepts() -> None:
    import jsonschema

    from support.crds import crd_schema

    build = build_file(LAB)
    text = build.files[PurePosixPath("lab", "_monitoring", watch.SERVICE_MONITOR_FILE)].text
    (obj,) = [d for d in yaml.safe_load_all(text) if d]
    jsonschema.Draft7Validator(crd_schema("monitoring.coreos.com/v1", "ServiceMonitor")).validate(obj)
    service = exporter_objects(build)["Service"]
    assert obj["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert obj["spec"]["namespaceSelector"]["matchNames"] == [service["metadata"]["namespace"]]
    assert obj["spec"]["endpoints"][0]["port"] == service["spec"]["ports"][0]["name"]


# ---------------------------------------------------------------- the entry point, as the pod runs it
TOKEN = "eyJhbGciOiJSUzI1NiJ9.watch-token-never-shown"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kubeconfig(zones: Sequence[str]) -> str:
    """One context per zone, each at an API server that is not there, with a token."""
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": z, "cluster": {"server": "https://127.0.0.1:9"}} for z in zones],
        "users": [{"name": f"{z}-watch", "user": {"token": TOKEN}} for z in zones],
        "contexts": [{"name": z, "context": {"cluster": z, "user": f"{z}-watch"}} for z in zones],
    })


@pytest.fixture
def pod(tmp_path: Path) -> Iterator[tuple[list[str], dict[str, str], Path]]:
    """The exporter's container as a process: its mounts under `tmp_path`, its arguments after
    the image's entry point with the mount paths mapped there and the address on loopback."""
    build = build_file(LAB)
    rendered = exporter_objects(build)
    (container,) = rendered["Deployment"]["spec"]["template"]["spec"]["containers"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    root = tmp_path / "pod"
    where = {path: root / path.lstrip("/") for path in mounts.values()}
    for path in where.values():
        path.mkdir(parents=True)
    (where[mounts["fabric"]] / watch.FABRIC_KEY).write_text(rendered["ConfigMap"]["data"][watch.FABRIC_KEY])
    (where[mounts["kubeconfig"]] / "config").write_text(kubeconfig(["hq", "ai", "edge", "dr"]))
    for path in (where[mounts["fabric"]], where[mounts["kubeconfig"]]):
        path.chmod(0o555)  # mounted read-only

    def mapped(value: str) -> str:
        for mount, local in where.items():
            if value == mount or value.startswith(mount + "/"):
                return str(local) + value[len(mount):]
        return value

    port = free_port()
    entry = json.loads(containerfile()["ENTRYPOINT"])
    args = [mapped(a) for a in container["args"]]
    args[args.index(f"0.0.0.0:{watch.PORT}")] = f"127.0.0.1:{port}"
    env = {**os.environ, **{e["name"]: mapped(e["value"]) for e in container["env"]}}
    argv = [str(Path(sys.executable).with_name(entry[0])), *entry[1:], *args]
    if not Path(argv[0]).exists():
        pytest.skip(f"no {entry[0]} installed beside {sys.executable}")
    yield argv, env, root
    for path in where.values():
        path.chmod(0o755)


@pytest.mark.lab
def test_the_entry_point_serves_the_zones_it_cannot_reach_and_never_shows_the_token(
        pod: tuple[list[str], dict[str, str], Path]) -> None:
    argv, env, root = pod
    address = next(a for a in argv if a.startswith("127.0.0.1:"))
    process = subprocess.Popen(argv, env=env, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        body = ""
        for _ in range(600):  # the first reading: four unreachable clusters, each kubectl's own timeout
            try:
                with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as answer:
                    body = answer.read().decode()
                    break
            except urllib.error.HTTPError as exc:
                assert exc.code == 503  # before the first reading
            except OSError:
                pass
            assert process.poll() is None, process.communicate()
            time.sleep(0.1)
        assert 'fabricgen_status_check{site="lab"' in body
        assert re.search(r'fabricgen_status_check\{site="lab",scope="zone",name="edge",[^}]*state="unreachable"\} 1',
                         body), body[:3000]
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert "Traceback" not in err
    assert TOKEN not in body + out + err
    assert not (root / "etc").exists() or {p.name for p in (root / "etc" / "fabricgen").iterdir()} == {
        "fabric", "kubeconfig"}
