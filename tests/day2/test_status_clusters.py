"""`fabricgen status` of the Kubernetes consumers' clusters: the objects fabricgen renders for an
OVN-Kubernetes cluster (its ovn-config and ovnkube-config ConfigMaps, the ovnkube-db Service and
Endpoints, and the policy's Namespaces and NetworkPolicies) read by name through kubectl, in the
form kubectl prints them (`test_status_kubectl`'s helpers), and judged field by field as a
zone's are: a NetworkPolicy missing or changed on the cluster is drift that names it, a cluster
kubectl cannot reach is said once. The deployments' databases are not reachable here; only the
cluster's lines are judged."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from test_status_kubectl import PLURALS_OF, as_list, server_added

from fabricgen.judge.openmetrics import openmetrics
from fabricgen.judge.verdicts import Report, judge
from fabricgen.observe import capture, kube_objects, sources
from fabricgen.observe import live_fabric as live
from fabricgen.observe import runner as observe
from support.fabrics import REPO, build_file

FABRIC = REPO / "sites" / "openstack-k8s" / "fabric.yaml"
CLUSTER = "k8s-prod"
NAME_LABEL = "kubernetes.io/metadata.name"
Obj = dict[str, Any]


def answers(objects: dict[kube_objects.ObjectId, Obj] | None) -> observe.Observer:
    """kubectl's answers to the cluster's reads (`None`: the cluster does not answer); every other
    probe (the deployments' databases) fails as a database out of reach does."""

    class Kubectl:
        def observe(self, probes: Sequence[observe.Probe]) -> dict[str, capture.Observation]:
            out = {}
            for p in probes:
                if not p.key.startswith(f"clusters/{CLUSTER}/") or objects is None:
                    out[p.key] = capture.Observation(p.key, p.argv, 1, "", "error: connection refused")
                    continue
                namespace = p.argv[p.argv.index("-n") + 1] if "-n" in p.argv else None  # --all-namespaces
                asked = p.argv[p.argv.index("json") + 1:]
                wanted = [tuple(a.split("/", 1)) for a in asked]
                found = [body for oid, body in objects.items()
                         if (namespace is None or oid.namespace in (namespace, ""))
                         and ((PLURALS_OF.get((oid.group, oid.kind)), oid.name) in wanted  # TYPE/NAME
                              or PLURALS_OF.get((oid.group, oid.kind)) in asked)]  # every one of a kind
                out[p.key] = capture.Observation(p.key, p.argv, 0, as_list(found, empty="/" not in asked[0]), "")
            return out

    return Kubectl()


def report(edit: Callable[[dict[kube_objects.ObjectId, Obj]], None] | None = None, *,
           reachable: bool = True) -> Report:
    build = build_file(FABRIC)
    rendered = build.objects_within(CLUSTER)
    objects = {kube_objects.identify(o): server_added(o, i) for i, o in enumerate(rendered)}
    if edit is not None:
        edit(objects)
    found = live.gather(build, sources.plan(build, sources.Endpoints()), answers(objects if reachable else None))
    return judge(build, found, "sites/openstack-k8s/fabric.yaml")


def lines(result: Report) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for c in result.checks:
        if c.subject == f"cluster {CLUSTER}":
            out.setdefault(c.name, []).append((c.verdict, c.why))
    return out


def policies(objects: dict[kube_objects.ObjectId, Obj]) -> list[kube_objects.ObjectId]:
    return [oid for oid in objects if oid.kind == "NetworkPolicy"]


def test_the_rendered_objects_of_an_ovn_kubernetes_cluster_are_read_and_ok() -> None:
    build = build_file(FABRIC)
    kinds = {o["kind"] for o in build.objects_within(CLUSTER)}
    assert {"NetworkPolicy", "Namespace", "ConfigMap"} <= kinds
    found = lines(report())
    assert [v for v, _ in found["objects"]] == ["ok"], found


def test_a_network_policy_missing_or_changed_is_drift_that_names_it() -> None:
    def drop(objects: dict[kube_objects.ObjectId, Obj]) -> None:
        del objects[policies(objects)[0]]

    dropped = lines(report(drop))
    build = build_file(FABRIC)
    first = next(o for o in build.objects_within(CLUSTER) if o["kind"] == "NetworkPolicy")
    name = f"NetworkPolicy: {first['metadata']['namespace']}/{first['metadata']['name']}"
    assert ("drift", f"{name} is not in the cluster") in dropped["object.missing"], dropped

    def widen(objects: dict[kube_objects.ObjectId, Obj]) -> None:
        body = objects[policies(objects)[0]]
        changed = copy.deepcopy(body)
        changed["spec"]["ingress"] = [{}]  # someone opened it to everything
        objects[policies(objects)[0]] = changed

    widened = lines(report(widen))
    assert any(v == "drift" and name in why for v, why in widened["object.changed"]), widened


def test_a_cluster_that_does_not_answer_is_said_once_and_is_a_series() -> None:
    result = report(reachable=False)
    found = lines(result)
    assert [v for v, _ in found["objects"]] == ["unreachable"], found
    assert "connection refused" in found["objects"][0][1]
    text = openmetrics(result)
    assert (f'fabricgen_status_check{{site="openstack-k8s",scope="cluster",name="{CLUSTER}",database="",'
            'part="objects",check="objects",state="unreachable"} 1') in text


@pytest.mark.parametrize("context", [None, "prod-east"])
def test_the_cluster_is_read_through_its_destination(context: str | None) -> None:
    text = FABRIC.read_text(encoding="utf-8")
    if context is not None:
        text = text.replace("      - platform: kubernetes\n        name: k8s-prod\n",
                            f"      - platform: kubernetes\n        name: k8s-prod\n"
                            f"        destination: {{kubeContext: {context}}}\n", 1)
    from support.fabrics import build_text

    build = build_text(text, "sites/openstack-k8s/fabric.yaml")
    (cluster,) = sources.plan(build, sources.Endpoints()).clusters
    assert isinstance(cluster.access, sources.Kubectl) and cluster.access.context == (context or CLUSTER)
    probes = live._cluster_round(build, cluster)
    assert probes and all(p.argv[:3] == ("kubectl", "--context", context or CLUSTER) for p in probes)
    assert all(json.dumps(p.argv).count("secrets") == 0 for p in probes)


def test_the_endpoints_file_can_name_a_clusters_context_or_leave_it_unread(tmp_path: Any) -> None:
    from support.fabrics import build_text

    build = build_text(FABRIC.read_text(encoding="utf-8"), "sites/openstack-k8s/fabric.yaml")
    path = tmp_path / "endpoints.yaml"
    path.write_text("kubernetesClusters:\n  k8s-prod: {kubeContext: prod-admin}\n")
    (cluster,) = sources.plan(build, sources.read_endpoints(path)).clusters
    assert cluster.access == sources.Kubectl("prod-admin")
    path.write_text("kubernetesClusters:\n  k8s-prod: {read: false}\n")
    assert sources.plan(build, sources.read_endpoints(path)).clusters == ()
    path.write_text("kubernetesClusters:\n  k8s-prod: {read: maybe, colour: red}\n  nobody: {}\n")
    with pytest.raises(sources.EndpointsError) as refused:
        sources.plan(build, sources.read_endpoints(path))
    said = str(refused.value)
    assert "kubernetesClusters.k8s-prod.read: expected true or false" in said
    assert "kubernetesClusters.k8s-prod.colour: unknown key" in said
    path.write_text("kubernetesClusters:\n  nobody: {}\n")
    with pytest.raises(sources.EndpointsError, match="kubernetesClusters names nobody, which the fabric has not"):
        sources.plan(build, sources.read_endpoints(path))


def test_another_owners_network_policy_on_a_protected_groups_pods_is_named() -> None:
    """NetworkPolicies add up: an allow-all in namespace shop (podSelector {}) admits everything to
    shop-web's pods beside the fabric's policy; one for app=db pods selects none of them; one that
    admits nothing (a deny) widens nothing. Only the first is named."""
    def add(objects: dict[kube_objects.ObjectId, Obj]) -> None:
        for name, selector, ingress in (("allow-all", {}, [{}]), ("db-only", {"matchLabels": {"app": "db"}}, [{}]),
                                        ("deny", {}, [])):
            body = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                    "metadata": {"name": name, "namespace": "shop"},
                    "spec": {"podSelector": selector, "policyTypes": ["Ingress"], "ingress": ingress}}
            objects[kube_objects.identify(body)] = body

    assert lines(report(add))["policy.network-policy"] == [
        ("drift", "NetworkPolicy shop/allow-all, which the fabric does not render, selects every pod of group "
                  "shop-web (podSelector {} (every pod of the namespace)): NetworkPolicies add up, so what it "
                  "admits reaches them beside the fabric's policy")]
    assert "policy.network-policy" not in lines(report())


def test_a_capture_made_before_the_namespaces_were_listed_still_judges_the_cluster() -> None:
    """A capture made before status listed a namespace's NetworkPolicies lacks that read: a replay
    answers it `not in the capture`, and the rendered objects, read by name, are judged as before
    (not the whole cluster unread); a listing kubectl could not answer is still an error."""
    build = build_file(FABRIC)
    rendered = build.objects_within(CLUSTER)
    objects = {kube_objects.identify(o): server_added(o, i) for i, o in enumerate(rendered)}
    kubectl = answers(objects)

    class Old:
        def __init__(self, why: str) -> None:
            self.why = why

        def observe(self, probes: Sequence[observe.Probe]) -> dict[str, capture.Observation]:
            out = kubectl.observe(probes)
            for key in [k for k in out if "/objects/every/" in k]:
                out[key] = capture.Observation(key, out[key].argv, capture.NOT_RUN, "", self.why)
            return out

    replayed = lines(judge(build, live.gather(build, sources.plan(build, sources.Endpoints()),
                                              Old(capture.NOT_CAPTURED)), "f"))
    assert [v for v, _ in replayed["objects"]] == ["ok"], replayed
    timed_out = lines(judge(build, live.gather(build, sources.plan(build, sources.Endpoints()),
                                               Old("no answer within 30 s")), "f"))
    assert [v for v, _ in timed_out["objects"]] == ["unreachable"], timed_out


def test_another_owners_admin_network_policy_decided_before_the_fabrics_is_named() -> None:
    """An AdminNetworkPolicy is decided before every NetworkPolicy, the lowest priority first: an
    Allow at 10 on namespace shop admits its peers to shop-web's pods before the fabric's at 20
    denies them, and a Pass at 20 (the same priority: the order is chance) skips the fabric's Deny.
    One after the fabric's (50), and one whose subject (app=db) selects none of the group's pods,
    change nothing. Each rule is named with what it does."""
    def anp(name: str, priority: int, subject: Obj, action: str) -> Obj:
        return {"apiVersion": "policy.networking.k8s.io/v1alpha1", "kind": "AdminNetworkPolicy",
                "metadata": {"name": name},
                "spec": {"priority": priority, "subject": subject,
                         "ingress": [{"name": "from-monitoring", "action": action,
                                      "from": [{"namespaces": {"matchLabels": {NAME_LABEL: "monitoring"}}}]}]}}

    shop = {"namespaceSelector": {"matchLabels": {NAME_LABEL: "shop"}}}

    def add(objects: dict[kube_objects.ObjectId, Obj]) -> None:
        for body in (anp("monitoring-first", 10, {"namespaces": shop["namespaceSelector"]}, "Allow"),
                     anp("same-priority", 20, {"pods": {**shop, "podSelector": {"matchLabels": {"app": "web"}}}},
                         "Pass"),
                     anp("after", 50, {"namespaces": shop["namespaceSelector"]}, "Allow"),
                     anp("db-only", 5, {"pods": {**shop, "podSelector": {"matchLabels": {"app": "db"}}}}, "Deny")):
            objects[kube_objects.identify(body)] = body

    assert lines(report(add))["policy.admin-network-policy"] == [
        ("drift", "AdminNetworkPolicy monitoring-first, which the fabric does not render, selects every pod of group "
                  "shop-web (at priority 10, decided before the fabric's at 20): its ingress rule 0 "
                  "('from-monitoring', Allow) admits its peers whatever the fabric's policy says"),
        ("drift", "AdminNetworkPolicy same-priority, which the fabric does not render, selects every pod of group "
                  "shop-web (at priority 20, decided before the fabric's at 20): its ingress rule 0 "
                  "('from-monitoring', Pass) skips the fabric's AdminNetworkPolicy and leaves its peers to every "
                  "owner's NetworkPolicies")]
    assert "policy.admin-network-policy" not in lines(report())
