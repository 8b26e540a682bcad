"""`fabricgen transit`, its `ovn-ic-sbctl show` parser and the fabric.yaml round-trip writer.

The show samples in tests/data/icsb_show/ are verbatim `ovn-ic-sbctl show` output
of OVN 23.03 (three AZs; and the edge cases: a second transit switch, a dual-stack
port, a second gateway with two encaps, an unclaimed port). Output of a live IC SB
is covered in test_ovn_sandbox.py.
"""

from __future__ import annotations

import io
import json
from ipaddress import IPv4Interface, IPv6Interface
from pathlib import Path

import pytest

from conftest import REPO
from fabricgen.cli import main
from fabricgen.live_state import icsb_show
from fabricgen.source.writer import EditError, set_scalars

DATA = REPO / "tests" / "data" / "icsb_show"
THREE_AZ = DATA / "three-az.txt"
EDGE_CASES = DATA / "edge-cases.txt"

# Zones named like the sample's AZs: az1 agrees, az2 is stale, az3 has no address yet.
FABRIC = """\
# yaml-language-server: $schema=../schemas/fabric.schema.json
apiVersion: fabricgen.io/v1alpha1
kind: Fabric
metadata:
  name: sample   # three AZs

interconnection:
  encapsulation: geneve
  database:
    members:
      - {node: ic-1, address: 10.0.0.11}
zones:
  - name: az1
    platform: kube-ovn
    gatewayNodes: [gw-az1]
    transitAddress: 169.254.100.1   # from ovn-ic-sbctl show
    backbone:
      cidr: 172.30.10.0/24
  - name: az2
    platform: kube-ovn
    gatewayNodes: [gw-az2]
    # re-read after every IC rebuild
    transitAddress: "169.254.100.20"
    cluster: {podCIDR: 10.56.0.0/16}
    backbone:
      cidr: 172.30.20.0/24
  - name: az3
    platform: kube-ovn
    gatewayNodes:
      - gw-az3
    cluster: {podCIDR: 10.58.0.0/16}
    backbone:
      cidr: 172.30.30.0/24   # the last zone
"""


def transit(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["transit", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def fabric(tmp_path: Path) -> Path:
    path = tmp_path / "fabric.yaml"
    path.write_text(FABRIC)
    return path


# ---------------------------------------------------------------- parser
def test_parse_three_az_sample() -> None:
    show = icsb_show.parse(THREE_AZ.read_text())
    assert show.zones == ("az1", "az2", "az3")
    assert [(g.zone, g.chassis, g.hostname, g.encaps) for g in show.gateways] == [
        (f"az{i}", f"gw-az{i}", f"gw-az{i}", (("geneve", f"127.0.0.1{i}"),)) for i in (1, 2, 3)
    ]
    ports = show.ports_on("ts")
    assert sorted(ports) == ["az1", "az2", "az3"]
    for i in (1, 2, 3):
        port = ports[f"az{i}"]
        assert (port.name, port.gateway, port.transit_switch, port.mac) == (
            f"ts-az{i}", f"gw-az{i}", "ts", f"00:00:a9:fe:64:0{i}")
        assert port.addresses == (IPv4Interface(f"169.254.100.{i}/24"),)
        assert port.line == 6 + 8 * (i - 1)


def test_parse_edge_cases_sample() -> None:
    show = icsb_show.parse(EDGE_CASES.read_text())
    assert {z: p.ipv4 for z, p in show.ports_on("ts").items()} == {
        f"az{i}": IPv4Interface(f"169.254.100.{i}/24") for i in (1, 2, 3)
    }
    # ts2-az3 has no claimed gateway, so `show` does not list it.
    (dual,) = show.ports_on("ts2").values()
    assert (dual.zone, dual.name) == ("az1", "ts2-az1")
    assert dual.addresses == (IPv4Interface("169.254.101.1/24"), IPv6Interface("fd00:101::1/64"))
    assert dual.ipv4 == IPv4Interface("169.254.101.1/24")
    gw2 = next(g for g in show.gateways if g.chassis == "gw2-az3")
    assert gw2.encaps == (("geneve", "127.0.0.23"), ("vxlan", "127.0.0.23"))
    assert not [p for p in show.ports if p.gateway == "gw2-az3"]


def unclaimed(text: str) -> str:
    """The output before the gateways claimed their ports: no port blocks."""
    return "".join(line for line in text.splitlines(keepends=True)
                   if not line.startswith(("        port", "            transit", "            address")))


def test_parse_before_ports_are_claimed_lists_zones_without_ports() -> None:
    show = icsb_show.parse(unclaimed(THREE_AZ.read_text()))
    assert show.zones == ("az1", "az2", "az3") and show.ports == ()


def test_transit_with_unclaimed_ports_changes_nothing(fabric: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    show = tmp_path / "show.txt"
    show.write_text(unclaimed(THREE_AZ.read_text()))
    code, out, err = transit([str(fabric), str(show), "--write"], capsys)
    assert code == 3
    # nothing `--write` could take: the summary says to wait, not to write
    assert err.endswith("nothing to update yet: run it again once every zone has its port on ts\n"), err
    assert out.splitlines() == [
        f"{fabric.as_posix()}:{line}:21: zones[{i}].transitAddress: {address} -> ? (zone az{i + 1} is listed "
        "but has no port on ts: its gateway has not claimed the port yet; left as it is)"
        for i, line, address in ((0, 16, "169.254.100.1"), (1, 23, "169.254.100.20"))
    ]
    assert fabric.read_text() == FABRIC


def test_parse_order_and_crlf_do_not_matter() -> None:
    blocks = THREE_AZ.read_text().split("availability-zone ")[1:]
    shuffled = "".join("availability-zone " + b for b in reversed(blocks)).replace("\n", "\r\n")
    show = icsb_show.parse(shuffled)
    assert show.zones == ("az3", "az2", "az1")
    assert {z: p.ipv4 for z, p in show.ports_on("ts").items()} == {
        f"az{i}": IPv4Interface(f"169.254.100.{i}/24") for i in (1, 2, 3)
    }


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("switch 1234 (ts)\n    port ts-az1\n", 1, "expected `availability-zone NAME`"),
        ("    gateway gw-az1\n", 1, "before the first `availability-zone`"),
        ("availability-zone az1\n\tgateway gw\n", 2, "tab in indentation"),
        ("availability-zone az1\n    gateway gw\n        port ts-az1\n            transit switch: ts\n"
         "            address: [\"00:00:a9:fe:64:01\"]\n", 5, "unreadable address"),
        ("availability-zone az1\n    gateway gw\n        port ts-az1\n            transit switch: ts\n",
         3, "no `transit switch:` or no `address:` line"),
        ("availability-zone az1\n      gateway gw\n", 2, "not a multiple of 4"),
    ],
)
def test_parse_errors_name_the_line(text: str, line: int, message: str) -> None:
    with pytest.raises(icsb_show.ShowParseError) as info:
        icsb_show.parse(text, "show.txt")
    assert info.value.line == line
    assert message in str(info.value)
    assert str(info.value).startswith(f"show.txt:{line}: ")


# ---------------------------------------------------------------- command
def test_transit_reports_differences_and_exits_3(fabric: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = transit([str(fabric), str(THREE_AZ)], capsys)
    assert code == 3
    assert out.splitlines() == [
        f"{fabric.as_posix()}:23:21: zones[1].transitAddress: 169.254.100.20 -> 169.254.100.2 "
        "(zone az2: port ts-az2 on ts)",
        f"{fabric.as_posix()}:27:5: zones[2].transitAddress: (unset) -> 169.254.100.3 "
        "(zone az3: port ts-az3 on ts)",
    ]
    assert "differ" in err and "--write" in err
    assert fabric.read_text() == FABRIC


def test_transit_json_from_stdin(fabric: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(THREE_AZ.read_text()))
    code, out, _err = transit([str(fabric), "-", "--format", "json"], capsys)
    assert code == 3
    doc = json.loads(out)
    assert (doc["show"], doc["transitSwitch"], doc["differ"], doc["written"]) == ("<stdin>", "ts", True, False)
    assert [(z["zone"], z["status"], z["fabric"], z["icsb"], z["port"]) for z in doc["zones"]] == [
        ("az1", "ok", "169.254.100.1", "169.254.100.1", "ts-az1"),
        ("az2", "changed", "169.254.100.20", "169.254.100.2", "ts-az2"),
        ("az3", "added", None, "169.254.100.3", "ts-az3"),
    ]
    assert doc["unknownZones"] == []


def test_transit_write_keeps_comments_and_formatting(fabric: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = transit([str(fabric), str(THREE_AZ), "--write"], capsys)
    assert code == 3
    assert "updated" in err
    expected = FABRIC.replace('transitAddress: "169.254.100.20"', 'transitAddress: "169.254.100.2"').replace(
        "    gatewayNodes:\n      - gw-az3\n",
        "    gatewayNodes:\n      - gw-az3\n    transitAddress: 169.254.100.3\n")
    assert fabric.read_text() == expected
    code, out, err = transit([str(fabric), str(THREE_AZ)], capsys)
    assert (code, out) == (0, "")
    assert "match (3 zone(s))" in err


def test_transit_write_refuses_a_result_that_is_invalid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # az1 keeps .1 (it has no port in this output) while the IC SB says az2 is now .1.
    path = tmp_path / "fabric.yaml"
    path.write_text(FABRIC)
    show = THREE_AZ.read_text().split("availability-zone az2")[1]
    show = "availability-zone az2" + show.replace("169.254.100.2/24", "169.254.100.1/24")
    (tmp_path / "show.txt").write_text(show)
    code, out, err = transit([str(path), str(tmp_path / "show.txt"), "--write"], capsys)
    assert code == 1
    assert "[FG207]" in err and "left unchanged" in err
    assert "zones[0].transitAddress: 169.254.100.1 -> ? (zone az1 is not in this ovn-ic-sbctl show output" in out
    assert path.read_text() == FABRIC


def test_transit_lab_against_other_zones(capsys: pytest.CaptureFixture[str]) -> None:
    lab = REPO / "sites" / "lab" / "fabric.yaml"
    code, out, _err = transit([str(lab), str(THREE_AZ)], capsys)
    assert code == 3
    assert out.count("-> ? (zone ") == 4
    assert out.count("is not in this ovn-ic-sbctl show output") == 4
    assert out.count("note: availability zone") == 3


def test_transit_rejects_input_that_is_not_show_output(fabric: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "nbctl.txt"
    bad.write_text("switch 0b7f (ts)\n    port ts-az1\n")
    code, out, err = transit([str(fabric), str(bad)], capsys)
    assert (code, out) == (1, "")
    assert f"{bad}:1: expected `availability-zone NAME`" in err
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    code, _out, err = transit([str(fabric), str(empty)], capsys)
    assert code == 1 and "no availability zone" in err
    code, _out, err = transit([str(fabric), str(tmp_path / "absent.txt")], capsys)
    assert code == 1 and "cannot read" in err


# ---------------------------------------------------------------- writer
def test_writer_keeps_a_four_space_style_byte_for_byte() -> None:
    text = (
        "# top comment\n"
        "zones:\n"
        "-   name: a    # first\n"
        "    transitAddress: '169.254.100.9'\n"
        "    tags: [x, y]\n"
        "-   name: b\n"
        "    note: >-\n"
        "        folded text\n"
    )
    new = set_scalars(text, {("zones", 0, "transitAddress"): "169.254.100.10", ("zones", 1, "transitAddress"): "x"},
                      after=("name",))
    assert new == (
        text.replace("'169.254.100.9'", "'169.254.100.10'")
        .replace("-   name: b\n", "-   name: b\n    transitAddress: x\n")
    )


def test_writer_rejects_paths_that_do_not_exist() -> None:
    with pytest.raises(EditError):
        set_scalars("zones: []\n", {("zones", 3, "transitAddress"): "x"})
    with pytest.raises(EditError):
        set_scalars("zones: [1]\n", {("zones", 0, "transitAddress"): "x"})
