"""The fabric's watch: Prometheus alert rules for the ways an OVN fabric fails silently.

Two files under `_monitoring/`, the same rules in each: `prometheus-rules.yml`, a rule file for a
Prometheus without the operator (`rule_files:`), and `prometheusrule.yaml`, a `PrometheusRule`
for the Prometheus operator. SUSE Virtualization's monitoring add-on (rancher-monitoring
109.0.3, kube-prometheus-stack 80.9.1) selects every PrometheusRule in every namespace: its
values set `ruleSelector: {}`, `ruleNamespaceSelector: {}` and `ruleSelectorNilUsesHelmValues:
false` (rancher/charts `charts/rancher-monitoring/109.0.3+up80.9.1-rancher.14/values.yaml`, as
harvester/addons `pkg/templates/rancherd-22-addons.yaml` leaves them); the object carries
`release: rancher-monitoring` too, which the chart's upstream default would select on.

The rules read two sources:

- fabricgen's own (`fabricgen status --format openmetrics`, docs/watching.md):
  `fabricgen_status_check{scope, name, database, part, check, state}`, for what only a
  comparison with the fabric or across databases can see: raft quorum and members as the fabric
  declares them, the IC database's `vxlan_mode` and tunnel keys, stale next hops, gateways,
  drift;
- kube-ovn-monitor's, for a zone's own NB and SB (kubeovn/kube-ovn `pkg/ovnmonitor/metric.go`,
  v1.16.2, namespace `kube_ovn`): `kube_ovn_cluster_leader_self`, `kube_ovn_cluster_status`,
  `kube_ovn_ovn_status`.

`for:` durations come from raft's timers: an election takes one to two election timeouts
(OVSDB's default 1 s, randomised up to 2 s: openvswitch/ovs `ovsdb/raft.c`; Kube-OVN sets
none), so 2 minutes of no leader is never an election in progress nor one missed scrape at a
30-60 s interval; a member that restarts rejoins and installs a snapshot within minutes, so
member alerts wait 10 minutes; drift waits 30 minutes, the time a GitOps sync takes to apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from fabricgen.plan.zones import Plan
from fabricgen.render import metadata as md
from fabricgen.render.artifacts import Artifact, TextFile
from fabricgen.render.header import header
from fabricgen.serialise import manifest_yaml

DIRECTORY = PurePosixPath("_monitoring")
RULE_FILE = "prometheus-rules.yml"
OPERATOR_FILE = "prometheusrule.yaml"
NAMESPACE = "cattle-monitoring-system"  # where SUSE Virtualization's monitoring add-on runs
CHECK = "fabricgen_status_check"


@dataclass(frozen=True)
class Alert:
    name: str
    expr: str
    wait: str  # the rule's `for`
    severity: str  # critical pages; warning does not
    summary: str
    fix: str
    source: str  # whose metric: fabricgen, or the upstream file that defines it

    def rule(self, site: str, runbook: str | None = None, cluster_label: str = "cluster") -> dict[str, Any]:
        """The rule for one site: fabricgen's series of that site only, kube-ovn-monitor's grouped
        by `cluster_label` too. The fix says FABRIC, not the fabric's path: a path is the user's to
        name, and no path reaches generated content but the provenance header
        (`tests/render/test_provenance.py`). `runbook`: the page's URL (`watch.runbookUrl`); without one
        there is no runbook_url (a relative path is nothing a pager can open)."""
        annotations = {"summary": self.summary.replace(CLUSTER, cluster_label), "description": self.fix}
        if runbook is not None:
            annotations["runbook_url"] = f"{runbook}#{self.name.lower()}"
        return {"alert": self.name,
                "expr": self.expr.replace(SITE, f'site="{site}",').replace(CLUSTER, cluster_label),
                "for": self.wait, "labels": {"severity": self.severity, "fabric": site},
                "annotations": annotations}


SITE = "SITE,"  # in an expression: where the site's selector goes (`Alert.rule`)
CLUSTER = "CLUSTER_LABEL"  # where the label telling clusters apart goes (`watch.clusterLabel`)


def _state(checks: str, states: str) -> str:
    """The checks (a regular expression, in a PromQL raw string: no escapes) in one of the states."""
    return f'{CHECK}{{{SITE}check=~`{checks}`,state=~"{states}"}} == 1'


WHERE = ("{{ $labels.scope }}{{ if $labels.name }} {{ $labels.name }}{{ end }}"
         "{{ if $labels.database }} {{ $labels.database }}{{ end }}")  # `zone hq NB`, `ic NB`
ALERTS: tuple[Alert, ...] = (
    # raft.leader unhealthy: members answered and name no leader, or too few answer for a quorum; a
    # database nothing could read is `unreachable`, which is FabricUnread's, not a page
    Alert("FabricRaftQuorumLost", _state(r"raft\.leader", "unhealthy"), "2m", "critical",
          f"{WHERE}: the raft cluster has no leader or no quorum",
          "Writes to this database fail. Find the members that are down (`fabricgen status FABRIC -q`), bring them "
          "back; if one lost its files, remove its stale server with the `cluster/kick` fabricgen status names, "
          "then let it rejoin.", "fabricgen"),
    Alert("FabricRaftMemberProblem",
          _state(r"raft\.(status|servers|members|count|connections|log)", "unhealthy"), "10m", "warning",
          f"{WHERE}: a raft member is lost, stale, behind, or the cluster has an even member count",
          "One more failure may lose quorum. `fabricgen status FABRIC -q` names the member and the command "
          "(`cluster/kick` of the stale server id, or the rejoin) that fixes it.", "fabricgen"),
    Alert("FabricVxlanModeMissing", _state(r"ic\.vxlan-mode", "unhealthy|drift"), "5m", "critical",
          "the IC northbound database has no vxlan_mode on a VXLAN fabric",
          "Transit switches get tunnel keys outside VXLAN's range and cross-zone traffic is lost. Run the "
          "rendered configure-ic-db.sh against the IC northbound database, then `fabricgen status`.", "fabricgen"),
    Alert("FabricTunnelKeyMismatch", _state(r"ic\.tunnel-key|transit\.tunnel-key", "unhealthy|drift"), "5m",
          "critical", f"{WHERE}: a transit switch's tunnel key differs between the IC database and an AZ",
          "Packets between the AZs are dropped. Check `vxlan_mode`, then restart ovn-ic in the AZ named.",
          "fabricgen"),
    Alert("FabricStaleNextHop", _state(r"routes\.(stale|next-hop)", "drift|unhealthy"), "5m", "critical",
          f"{WHERE}: a static route's next hop is no longer a zone's transit address",
          "An IC rebuild moved a zone's transit address. Run `fabricgen transit FABRIC SHOW --write`, render, "
          "commit and let the sync apply it.", "fabricgen"),
    Alert("FabricGatewayMissing", _state(r"gateways|az\.registered", "drift|unhealthy"), "10m", "warning",
          f"{WHERE}: a gateway chassis or the AZ's registration is missing",
          "Cross-zone traffic of this AZ has no gateway or no standby. Check the gateway nodes named in the "
          "fabric and their ovn-controller.", "fabricgen"),
    Alert("FabricDrift", f'{CHECK}{{{SITE}state="drift"}} == 1', "30m", "warning",
          f"{WHERE}: the live fabric differs from fabric.yaml ({{{{ $labels.check }}}})",
          "`fabricgen status FABRIC -q` says what differs; sync the rendered output, or change the fabric.",
          "fabricgen"),
    # Nothing of the IC database could be read (every check of it unreachable: its tables, its
    # members) while the exporter reads something else: the IC database is down, not the
    # exporter's access, which leaves nothing read at all (FabricUnread's warning)
    Alert("FabricIcDatabaseDown",
          f'count by (site) ({CHECK}{{{SITE}scope="ic",state="unreachable"}} == 1) '
          f'unless on (site) count by (site) ({CHECK}{{{SITE}scope="ic",state!="unreachable"}} == 1) '
          f'and on (site) count by (site) ({CHECK}{{{SITE}scope!="ic",state!="unreachable"}} == 1)', "2m", "critical",
          "the IC database answers on no member while the rest of the fabric answers",
          "No zone's ovn-ic reaches the IC database: new routes, gateways and AZs stop propagating, and a "
          "restarted ovn-ic cannot rejoin. Start the IC server's members (`kubectl -n kube-system get pods -l "
          "app=ovn-ic-server` in the zone running it), then `fabricgen status FABRIC -q`; if a member lost its "
          "files, recover as `fabricgen status` says, one member at a time.", "fabricgen"),
    Alert("FabricUnread", f'{CHECK}{{{SITE}state="unreachable"}} == 1', "15m", "warning",
          f"{WHERE}: part of the fabric could not be read ({{{{ $labels.check }}}})",
          "Nothing is known about it. Check the exporter's access (kubeconfig, endpoints) and the database.",
          "fabricgen"),
    Alert("FabricWatchAbsent", f"absent(fabricgen_status_verdict{{{SITE}}})", "15m", "warning",
          "no reading of the fabric for 15 minutes",
          "Nothing watches the fabric: the exporter is down or not scraped.", "fabricgen"),
    Alert("KubeOvnRaftNoLeader", f"max by ({CLUSTER}, db_name) (kube_ovn_cluster_leader_self) < 1", "2m",
          "critical", f"{{{{ with $labels.{CLUSTER} }}}}{{{{ . }}}} {{{{ end }}}}{{{{ $labels.db_name }}}}: no member "
          "of this zone's raft cluster is leader",
          "The zone's NB or SB refuses writes. Check the ovn-central pods (`kubectl ko nb status`, `sb status`).",
          "kubeovn/kube-ovn pkg/ovnmonitor/metric.go cluster_leader_self"),
    Alert("KubeOvnRaftMemberNotInCluster", 'kube_ovn_cluster_status{server_status!="cluster member"} == 1', "10m",
          "warning", "{{ $labels.db_name }} on {{ $labels.hostname }}: {{ $labels.server_status }}",
          "A member is out of its raft cluster. `kubectl ko nb status` / `sb status` on the pod, then rejoin it or "
          "kick its stale server id.", "kubeovn/kube-ovn pkg/ovnmonitor/metric.go cluster_status"),
    Alert("KubeOvnDatabaseUnhealthy", "kube_ovn_db_status == 0", "5m", "warning",
          "{{ $labels.db_name }} on {{ $labels.hostname }} is unhealthy",
          "kube-ovn-monitor restores the database by itself after six failed checks of it in a row "
          "(exportOvnDBStatusGauge runs restore-ovn-nb-db.sh); check why it failed before it does.",
          "kubeovn/kube-ovn pkg/ovnmonitor/metric.go db_status, exporter.go exportOvnDBStatusGauge"),
    Alert("KubeOvnComponentUnhealthy", "kube_ovn_ovn_status == 0", "5m", "warning",
          "{{ $labels.component }} on {{ $labels.hostname }} is unhealthy",
          "An OVN daemon of this zone (northd, a database server, ovn-controller) fails its health check; "
          "kube-ovn-monitor restores nothing for it: check the pod's logs.",
          "kubeovn/kube-ovn pkg/ovnmonitor/metric.go ovn_status"),
)


def groups(site: str, runbook: str | None = None, cluster_label: str = "cluster") -> list[dict[str, Any]]:
    ours = [a.rule(site, runbook, cluster_label) for a in ALERTS if a.source == "fabricgen"]
    kube_ovn = [a.rule(site, runbook, cluster_label) for a in ALERTS if a.source != "fabricgen"]
    return [{"name": f"fabricgen-{site}", "rules": ours}, {"name": f"fabricgen-{site}-kube-ovn", "rules": kube_ovn}]


def _groups(plan: Plan) -> list[dict[str, Any]]:
    watch = plan.fabric.watch
    if watch is None:
        return groups(plan.fabric.metadata.name)
    return groups(plan.fabric.metadata.name, watch.runbook_url, watch.cluster_label)


def prometheus_rule(plan: Plan) -> dict[str, Any]:
    site = plan.fabric.metadata.name
    return {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
            "metadata": md.metadata(f"fabricgen-{site}", NAMESPACE, plan.source_name,
                                    labels={"release": "rancher-monitoring"}),
            "spec": {"groups": _groups(plan)}}


def render(plan: Plan) -> list[Artifact]:
    fabric = plan.fabric
    if fabric.interconnection is None and not fabric.ovn_deployments:
        return []
    return [TextFile(DIRECTORY / RULE_FILE, header(plan) + manifest_yaml.dump({"groups": _groups(plan)})),
            TextFile(DIRECTORY / OPERATOR_FILE, header(plan) + "---\n" + manifest_yaml.dump(prometheus_rule(plan)))]
