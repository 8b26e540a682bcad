"""The fabric's alert rules, judged by Prometheus' own tools: `promtool check rules` on every
rendered rule file, `promtool test rules` with series that must fire and series that must not
(an election under way, one missed scrape, a member restarting within its grace), and the
PrometheusRule against the prometheus-operator CRD (tests/crds)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from fabricgen.render import alerts
from support.fabrics import REPO, SITES, build_file

pytestmark = pytest.mark.lab  # starts real programs: promtool

PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool missing (scripts/setup.sh --test installs it)")
LAB = REPO / "sites" / "lab" / "fabric.yaml"
RUNBOOK = "https://git.example/network/fabric/blob/main/docs/watching.md"  # sites/lab's watch.runbookUrl


def rule_file(tmp_path: Path) -> Path:
    build = build_file(LAB)
    path = tmp_path / alerts.RULE_FILE
    path.write_text(build.files[PurePosixPath("lab", str(alerts.DIRECTORY), alerts.RULE_FILE)].text)
    return path


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, cwd=cwd, check=False)


@needs_promtool
@pytest.mark.parametrize("site", SITES, ids=[s.parent.name for s in SITES])
def test_every_rendered_rule_file_is_valid(site: Path, tmp_path: Path) -> None:
    build = build_file(site)
    files = [f for p, f in build.files.items() if p.name == alerts.RULE_FILE]
    assert files, site
    (tmp_path / "rules.yml").write_text(files[0].text)
    done = promtool("check", "rules", "rules.yml", cwd=tmp_path)
    found = f"SUCCESS: {len(alerts.ALERTS)} rules found"
    assert done.returncode == 0 and found in done.stdout, done.stdout + done.stderr


def check(labels: str, state: str, site: str = "lab") -> str:
    return f'fabricgen_status_check{{site="{site}",{labels},state="{state}"}}'


IC_LEADER = 'scope="ic",database="nb",part="raft",check="raft.leader"'
HQ_MEMBERS = 'scope="zone",name="hq",database="sb",part="raft",check="raft.members"'
VXLAN = 'scope="ic",part="ic",check="ic.vxlan-mode"'
STALE = 'scope="zone",name="ai",part="routes",check="routes.stale"'
KEY = 'scope="zone",name="ai",part="transit",check="transit.tunnel-key"'
GATEWAYS = 'scope="zone",name="hq",part="gateways",check="gateways"'
GATEWAYS_EDGE = 'scope="zone",name="edge",part="gateways",check="gateways"'
DRIFTED = 'scope="zone",name="dr",part="object",check="object.changed"'
UNREAD = 'scope="zone",name="edge",part="cluster",check="cluster.read"'


def expected(name: str, severity: str, labels: dict[str, str], summary: str) -> dict[str, Any]:
    alert = next(a for a in alerts.ALERTS if a.name == name)
    site = {} if name.startswith("KubeOvn") else {"site": "lab"}  # absent() keeps the equality matcher
    return {"exp_labels": {"severity": severity, "fabric": "lab", **site, **labels},
            "exp_annotations": {"summary": summary, "description": alert.fix,
                                "runbook_url": f"{RUNBOOK}#{name.lower()}"}}


def cases() -> list[dict[str, Any]]:
    ic_leader = {"scope": "ic", "database": "nb", "part": "raft", "check": "raft.leader"}
    hq_members = {"scope": "zone", "name": "hq", "database": "sb", "part": "raft", "check": "raft.members"}
    return [
        {   # quorum lost: pending for 2 minutes, then fires naming the database; resolves after the repair
            "interval": "30s",
            "input_series": [{"series": check(IC_LEADER, "unhealthy"), "values": "0 0 1x12 0x10"}],
            "alert_rule_test": [
                {"eval_time": "2m", "alertname": "FabricRaftQuorumLost", "exp_alerts": []},
                {"eval_time": "4m", "alertname": "FabricRaftQuorumLost", "exp_alerts": [
                    expected("FabricRaftQuorumLost", "critical", {**ic_leader, "state": "unhealthy"},
                             "ic nb: the raft cluster has no leader or no quorum")]},
                {"eval_time": "10m", "alertname": "FabricRaftQuorumLost", "exp_alerts": []},
            ],
        },
        {   # an election under way (unknown), one reading unhealthy between two ok, a database nothing
            # could read (a warning's, FabricUnread), another fabric's quorum lost: nothing pages here
            "interval": "30s",
            "input_series": [{"series": check(IC_LEADER, "unknown"), "values": "0 1 1 0x20"},
                             {"series": check(IC_LEADER, "unhealthy"), "values": "0x5 1 0x15"},
                             {"series": check(IC_LEADER, "unreachable"), "values": "1x20"},
                             {"series": check(IC_LEADER, "unhealthy", site="other"), "values": "1x20"}],
            "alert_rule_test": [{"eval_time": t, "alertname": "FabricRaftQuorumLost", "exp_alerts": []}
                                for t in ("1m", "3m", "5m", "8m")],
        },
        {   # a member restarting for 5 minutes is within its grace; one lost for 15 minutes is not
            "interval": "1m",
            "input_series": [
                {"series": check(HQ_MEMBERS, "unhealthy"), "values": "1x5 0x20"},
                {"series": check(HQ_MEMBERS.replace('"sb"', '"nb"'), "unhealthy"), "values": "1x16 0x5"}],
            "alert_rule_test": [
                {"eval_time": "8m", "alertname": "FabricRaftMemberProblem", "exp_alerts": []},
                {"eval_time": "12m", "alertname": "FabricRaftMemberProblem", "exp_alerts": [
                    expected("FabricRaftMemberProblem", "warning", {**hq_members, "database": "nb",
                                                                    "state": "unhealthy"},
                             "zone hq nb: a raft member is lost, stale, behind, or the cluster has an even member "
                             "count")]},
            ],
        },
        {   # vxlan_mode removed, and a next hop moved: both page after 5 minutes
            "interval": "1m",
            "input_series": [{"series": check(VXLAN, "unhealthy"), "values": "1x10"},
                             {"series": check(STALE, "drift"), "values": "0 1x10"}],
            "alert_rule_test": [
                {"eval_time": "4m", "alertname": "FabricVxlanModeMissing", "exp_alerts": []},
                {"eval_time": "7m", "alertname": "FabricVxlanModeMissing", "exp_alerts": [
                    expected("FabricVxlanModeMissing", "critical",
                             {"scope": "ic", "part": "ic", "check": "ic.vxlan-mode", "state": "unhealthy"},
                             "the IC northbound database has no vxlan_mode on a VXLAN fabric")]},
                {"eval_time": "8m", "alertname": "FabricStaleNextHop", "exp_alerts": [
                    expected("FabricStaleNextHop", "critical",
                             {"scope": "zone", "name": "ai", "part": "routes", "check": "routes.stale",
                              "state": "drift"},
                             "zone ai: a static route's next hop is no longer a zone's transit address")]},
            ],
        },
        {   # one missed scrape of the exporter does not page; a quarter of an hour without one does
            "interval": "1m",
            "input_series": [{"series": 'fabricgen_status_verdict{site="lab",state="ok"}',
                              "values": "1 1 _ 1 1 _x20"}],
            "alert_rule_test": [
                {"eval_time": "4m", "alertname": "FabricWatchAbsent", "exp_alerts": []},
                {"eval_time": "26m", "alertname": "FabricWatchAbsent", "exp_alerts": [
                    expected("FabricWatchAbsent", "warning", {}, "no reading of the fabric for 15 minutes")]},
            ],
        },
        {   # a tunnel key that differs pages after 5 minutes; a gateway missing warns after 10, and one
            # back within them does not; drift waits 30 minutes (a sync); an unread part 15
            "interval": "1m",
            "input_series": [
                {"series": check(KEY, "unhealthy"), "values": "0 1x10"},
                {"series": check(GATEWAYS, "drift"), "values": "0 1x12"},
                {"series": check(GATEWAYS_EDGE, "drift"), "values": "0 1x5 0x10"},
                {"series": check(DRIFTED, "drift"), "values": "1x40"},
                {"series": check(UNREAD, "unreachable"), "values": "1x20"}],
            "alert_rule_test": [
                {"eval_time": "4m", "alertname": "FabricTunnelKeyMismatch", "exp_alerts": []},
                {"eval_time": "7m", "alertname": "FabricTunnelKeyMismatch", "exp_alerts": [
                    expected("FabricTunnelKeyMismatch", "critical",
                             {"scope": "zone", "name": "ai", "part": "transit", "check": "transit.tunnel-key",
                              "state": "unhealthy"},
                             "zone ai: a transit switch's tunnel key differs between the IC database and an AZ")]},
                {"eval_time": "8m", "alertname": "FabricGatewayMissing", "exp_alerts": []},
                {"eval_time": "12m", "alertname": "FabricGatewayMissing", "exp_alerts": [
                    expected("FabricGatewayMissing", "warning",
                             {"scope": "zone", "name": "hq", "part": "gateways", "check": "gateways",
                              "state": "drift"},
                             "zone hq: a gateway chassis or the AZ's registration is missing")]},
                {"eval_time": "20m", "alertname": "FabricDrift", "exp_alerts": []},
                {"eval_time": "35m", "alertname": "FabricDrift", "exp_alerts": [
                    expected("FabricDrift", "warning",
                             {"scope": "zone", "name": "dr", "part": "object", "check": "object.changed",
                              "state": "drift"},
                             "zone dr: the live fabric differs from fabric.yaml (object.changed)")]},
                {"eval_time": "10m", "alertname": "FabricUnread", "exp_alerts": []},
                {"eval_time": "16m", "alertname": "FabricUnread", "exp_alerts": [
                    expected("FabricUnread", "warning",
                             {"scope": "zone", "name": "edge", "part": "cluster", "check": "cluster.read",
                              "state": "unreachable"},
                             "zone edge: part of the fabric could not be read (cluster.read)")]},
            ],
        },
        {   # kube-ovn-monitor: a member out of its cluster for 10 minutes; a database unhealthy for 5
            "interval": "1m",
            "input_series": [
                {"series": 'kube_ovn_cluster_status{db_name="OVN_Southbound",hostname="n2",'
                           'server_status="disconnected from the cluster (election timeout)"}', "values": "1x15"},
                {"series": 'kube_ovn_cluster_status{db_name="OVN_Southbound",hostname="n1",'
                           'server_status="cluster member"}', "values": "1x15"},
                {"series": 'kube_ovn_ovn_status{component="northd",hostname="n3"}', "values": "1 0x10"}],
            "alert_rule_test": [
                {"eval_time": "8m", "alertname": "KubeOvnRaftMemberNotInCluster", "exp_alerts": []},
                {"eval_time": "12m", "alertname": "KubeOvnRaftMemberNotInCluster", "exp_alerts": [
                    expected("KubeOvnRaftMemberNotInCluster", "warning",
                             {"db_name": "OVN_Southbound", "hostname": "n2",
                              "server_status": "disconnected from the cluster (election timeout)"},
                             "OVN_Southbound on n2: disconnected from the cluster (election timeout)")]},
                {"eval_time": "4m", "alertname": "KubeOvnComponentUnhealthy", "exp_alerts": []},
                {"eval_time": "8m", "alertname": "KubeOvnComponentUnhealthy", "exp_alerts": [
                    expected("KubeOvnComponentUnhealthy", "warning", {"component": "northd", "hostname": "n3"},
                             "northd on n3 is unhealthy")]},
                {"eval_time": "8m", "alertname": "KubeOvnDatabaseUnhealthy", "exp_alerts": []},
            ],
        },
        {   # kube-ovn-monitor: no member of a zone's NB claims leadership for 2 minutes
            "interval": "30s",
            "input_series": [
                {"series": f'kube_ovn_cluster_leader_self{{db_name="OVN_Northbound",hostname="n{i}"}}',
                 "values": "1 0x10" if i == 1 else "0x11"} for i in (1, 2, 3)],
            "alert_rule_test": [
                {"eval_time": "1m", "alertname": "KubeOvnRaftNoLeader", "exp_alerts": []},
                {"eval_time": "4m", "alertname": "KubeOvnRaftNoLeader", "exp_alerts": [
                    expected("KubeOvnRaftNoLeader", "critical", {"db_name": "OVN_Northbound"},
                             "OVN_Northbound: no member of this zone's raft cluster is leader")]},
            ],
        },
        {   # two zones' kube-ovn-monitor in one Prometheus, told apart by `cluster` (watch.clusterLabel):
            # hq's leader does not hide ai's lost one, which pages alone
            "interval": "30s",
            "input_series": [
                {"series": f'kube_ovn_cluster_leader_self{{cluster="{zone}",db_name="OVN_Southbound",'
                           f'hostname="{zone}-{i}"}}', "values": "1x11" if (zone, i) == ("hq", 1) else "0x11"}
                for zone in ("hq", "ai") for i in (1, 2, 3)],
            "alert_rule_test": [
                {"eval_time": "4m", "alertname": "KubeOvnRaftNoLeader", "exp_alerts": [
                    expected("KubeOvnRaftNoLeader", "critical", {"cluster": "ai", "db_name": "OVN_Southbound"},
                             "ai OVN_Southbound: no member of this zone's raft cluster is leader")]},
            ],
        },
        {   # kube-ovn-monitor's database check failing: the database, not a component, with its restore
            "interval": "1m",
            "input_series": [{"series": 'kube_ovn_db_status{db_name="OVN_Northbound",hostname="n2"}',
                              "values": "1 0x10"}],
            "alert_rule_test": [
                {"eval_time": "4m", "alertname": "KubeOvnDatabaseUnhealthy", "exp_alerts": []},
                {"eval_time": "8m", "alertname": "KubeOvnDatabaseUnhealthy", "exp_alerts": [
                    expected("KubeOvnDatabaseUnhealthy", "warning", {"db_name": "OVN_Northbound", "hostname": "n2"},
                             "OVN_Northbound on n2 is unhealthy")]},
            ],
        },
        {   # the IC database dead, every member unread, while the zones answer: critical after 2 minutes
            "interval": "30s",
            "input_series": [
                *({"series": f'fabricgen_raft_member_up{{site="lab",scope="ic",name="",database="{db}",'
                             f'member="hq-node-{i}"}}', "values": "1 1 0x12"}
                  for db in ("nb", "sb") for i in (1, 2, 3)),
                {"series": check('scope="zone",name="hq",part="routes",check="routes"', "ok"), "values": "1x13"},
                {"series": check(IC_LEADER, "unreachable"), "values": "0 0 1x11"}],
            "alert_rule_test": [
                {"eval_time": "2m", "alertname": "FabricIcDatabaseDown", "exp_alerts": []},
                {"eval_time": "4m", "alertname": "FabricIcDatabaseDown", "exp_alerts": [
                    expected("FabricIcDatabaseDown", "critical", {},
                             "the IC database answers on no member while the rest of the fabric answers")]},
            ],
        },
        {   # the exporter reaches nothing (its kubeconfig gone): every part unread, the IC database too;
            # that is FabricUnread's warning, never this page
            "interval": "30s",
            "input_series": [
                *({"series": f'fabricgen_raft_member_up{{site="lab",scope="ic",name="",database="nb",'
                             f'member="hq-node-{i}"}}', "values": "0x20"} for i in (1, 2, 3)),
                {"series": check('scope="zone",name="hq",part="cluster",check="cluster.read"', "unreachable"),
                 "values": "1x20"},
                {"series": check('scope="zone",name="hq",part="cluster",check="cluster.read"', "ok"),
                 "values": "0x20"},
                {"series": check(IC_LEADER, "unreachable"), "values": "1x20"}],
            "alert_rule_test": [{"eval_time": t, "alertname": "FabricIcDatabaseDown", "exp_alerts": []}
                                for t in ("3m", "8m")],
        },
        {   # one member unread while the IC southbound still answers: not the database down
            "interval": "30s",
            "input_series": [
                {"series": check(IC_LEADER, "unreachable"), "values": "1x20"},
                {"series": check('scope="ic",part="ic",check="ic.read"', "ok"), "values": "1x20"},
                {"series": check('scope="zone",name="hq",part="routes",check="routes"', "ok"), "values": "1x20"}],
            "alert_rule_test": [{"eval_time": "8m", "alertname": "FabricIcDatabaseDown", "exp_alerts": []}],
        },
    ]


@needs_promtool
def test_alerts_fire_and_stay_quiet_as_they_promise(tmp_path: Path) -> None:
    rule_file(tmp_path)
    (tmp_path / "tests.yml").write_text(yaml.safe_dump({"rule_files": [alerts.RULE_FILE],
                                                        "evaluation_interval": "30s", "tests": cases()}))
    done = promtool("test", "rules", "tests.yml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_prometheus_rule_is_what_the_operator_accepts() -> None:
    import jsonschema

    from support.crds import crd_schema

    build = build_file(LAB)
    text = build.files[PurePosixPath("lab", str(alerts.DIRECTORY), alerts.OPERATOR_FILE)].text
    (obj,) = [d for d in yaml.safe_load_all(text) if d]
    # not crd_validator: its metaschema check refuses the CRD's Go regex `^(?i)(abort|warn)?$` (a Thanos
    # field fabricgen never writes); the schema itself is applied unchanged, strict as the others
    jsonschema.Draft7Validator(crd_schema("monitoring.coreos.com/v1", "PrometheusRule")).validate(obj)
    assert obj["metadata"]["labels"]["release"] == "rancher-monitoring"
    plain = yaml.safe_load(build.files[PurePosixPath("lab", str(alerts.DIRECTORY), alerts.RULE_FILE)].text)
    assert obj["spec"]["groups"] == plain["groups"]  # the same rules in both files


def test_every_alert_has_its_runbook_section() -> None:
    """Each rule's runbook_url points at a heading of docs/watching.md (a GitHub anchor)."""
    page = (REPO / "docs" / "watching.md").read_text()
    for alert in alerts.ALERTS:
        assert f"\n### {alert.name}\n" in page
        assert alert.rule("lab", RUNBOOK)["annotations"]["runbook_url"] == f"{RUNBOOK}#{alert.name.lower()}"
        assert "runbook_url" not in alert.rule("lab")["annotations"]  # no base URL, no link a pager cannot open


@needs_promtool
def test_status_metrics_are_what_prometheus_reads(tmp_path: Path) -> None:
    """`status --format openmetrics` of a capture, linted by `promtool check metrics`; a series
    is never repeated (several objects of a zone with one check name are one series)."""
    from fabricgen.judge.checks import Check
    from fabricgen.judge.openmetrics import openmetrics
    from fabricgen.judge.verdicts import Report

    checks = (Check("zone hq", "object.changed", "drift", "Subnet a"), Check("zone hq", "object.changed", "ok", "b"),
              Check("zone hq sb raft", "raft.leader", "unhealthy", "no leader"),
              Check("IC database", "ic.vxlan-mode", "ok", "set"),
              Check('deployment "odd\\name"', "routes", "ok", "weird subject"))
    text = openmetrics(Report("sites/lab/fabric.yaml", "lab", checks))
    done = subprocess.run([str(PROMTOOL), "check", "metrics"], input=text, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    series = [line.rsplit(" ", 1)[0] for line in text.splitlines() if not line.startswith("#")]
    assert len(series) == len(set(series))
    assert ('fabricgen_status_check{site="lab",scope="zone",name="hq",database="",part="object",'
            'check="object.changed",state="drift"} 1') in text
    assert ('fabricgen_status_check{site="lab",scope="zone",name="hq",database="sb",part="raft",'
            'check="raft.leader",state="unhealthy"} 1') in text
    assert 'name="\\"odd\\\\name\\""' in text  # escaped as OpenMetrics says
    assert text.endswith("# EOF\n")
