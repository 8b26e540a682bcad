"""Three transit switches, as a default Kube-OVN install has them (`install-ic-server.sh`
`TS_NUM=3`): the lab builds them as Kube-OVN's IC server and controllers do, every zone on each
with its gateways in rotated order, `verify` proves the routes over the first and the others
joined, and `status` reads them from the real IC southbound without calling anything stale.

Upstream code copied into the lab (kubeovn/kube-ovn): `pkg/ovn_leader_checker/ovn.go` `updateTS`,
`getTSName`, `getTSCidr` (the names `ts`, `ts1`, `ts2` on 169.254.100/101/102.0/24) and
`pkg/ovn_ic_controller/ovn_ic_controller.go` `generateNewOrderGwNodes` (the gateways of switch i
rotated left by i).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricgen.cli import main
from fabricgen.judge.interconnection import _transit_switches
from fabricgen.lab import assembly
from fabricgen.lab.ovn.databases import IC_SB, NB
from fabricgen.lab.ovn.programs import PREFIX_VARIABLE, Programs
from fabricgen.lab.ovn.running import poll
from fabricgen.lab.ovn.sandbox import rotated
from fabricgen.observe.icsb_show import parse
from support.fabrics import REPO, build_text

pytestmark = pytest.mark.lab  # starts real programs: ovn-controller, ovn-ic, ovn-ic-nbctl, ovn-ic-sbctl, ovn-nbctl...

LAB = REPO / "sites" / "lab" / "fabric.yaml"
SYSTEM = Programs.from_environment()
DEBIAN13 = Programs((REPO / ".ovn" / "25.03").resolve())
THREE = LAB.read_text(encoding="utf-8").replace("    subnet: 169.254.100.0/24\n",
                                                 "    subnet: 169.254.100.0/24\n    count: 3\n", 1)


def _param(programs: Programs, id_: str) -> object:
    gone = programs.missing()
    return pytest.param(programs, id=id_, marks=pytest.mark.skipif(
        bool(gone), reason=f"OVN programs missing ({', '.join(gone)}): scripts/setup.sh --test"))


def test_kube_ovns_gateway_order_is_a_rotation() -> None:
    assert [rotated(["a", "b", "c"], i) for i in range(4)] == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"],
                                                              ["a", "b", "c"]]
    assert rotated([], 2) == []


@pytest.mark.parametrize("programs", [_param(SYSTEM, "ovn-23.03"), _param(DEBIAN13, "ovn-25.03")])
def test_the_lab_builds_three_switches_as_kube_ovn_does(programs: Programs, monkeypatch: pytest.MonkeyPatch) -> None:
    build = build_text(THREE, "sites/lab/fabric.yaml")
    assert build.plan.interconnection.transit_switch.names() == ["ts", "ts1", "ts2"]
    monkeypatch.setenv("PATH", programs.search_path())
    with assembly.running(build, programs=programs) as lab:
        sb = lab.sandbox
        ports = {(row["transit_switch"], row["logical_port"]) for row in
                 sb.rows(sb.ic_sb, IC_SB, "Port_Binding", ["transit_switch", "logical_port"])}
        zones = [z.spec for z in lab.zones]
        assert ports == {(ts, f"{ts}-{z.name}") for ts in ("ts", "ts1", "ts2") for z in zones}
        show = parse(sb.icsb("show"), "show")
        for index, ts in enumerate(("ts", "ts1", "ts2")):
            for zone, port in show.ports_on(ts).items():
                spec = next(z for z in zones if z.name == zone)
                assert port.ipv4 is not None and str(port.ipv4.network) == f"169.254.{100 + index}.0/24"
                # the gateways of switch i in Kube-OVN's order for it: priorities 100, 99, ... rotated by i
                rows = sb.rows(sb.nb_db(zone), NB, "Gateway_Chassis", ["chassis_name", "priority", "name"])
                mine = sorted((r for r in rows if str(r["name"]).startswith(f"{zone}-{ts}-")),
                              key=lambda r: -int(r["priority"]))
                assert [r["chassis_name"] for r in mine] == rotated([spec.gateway, *spec.standby], index)
        # status of the same live IC southbound: the fabric keeps the three, nothing to delete
        assert _transit_switches(build.plan.fabric, show) == []
        one = build_text(LAB.read_text(encoding="utf-8"), "sites/lab/fabric.yaml")
        [check] = _transit_switches(one.plan.fabric, show)
        assert "applying it deletes ts1, ts2" in check.why
        poll("keys", lab._keys_synced)


@pytest.mark.parametrize("programs", [_param(DEBIAN13, "ovn-25.03")])
def test_verify_proves_the_routes_with_three_switches(programs: Programs, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    fabric = tmp_path / "sites" / "lab" / "fabric.yaml"
    fabric.parent.mkdir(parents=True)
    fabric.write_text(THREE, encoding="utf-8")
    # what `--ovn-prefix` sets for the process, set so that it is unset again after this test
    monkeypatch.setenv(PREFIX_VARIABLE, str(programs.prefix))
    assert main(["verify", str(fabric), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["transitSwitches"] == ["ts", "ts1", "ts2"] and doc["ok"] and doc["total"] == 12
