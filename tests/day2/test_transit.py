"""`fabricgen transit`, its `ovn-ic-sbctl show` parser and the fabric.yaml round-trip writer.

The show samples in tests/data/icsb_show/ are verbatim `ovn-ic-sbctl show` output
of OVN 23.03 (three AZs; and the edge cases: a second transit switch, a dual-stack
port, a second gateway with two encaps, an unclaimed port). Output of a live IC SB
is covered in test_ovn_sandbox.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from ipaddress import IPv4Interface, IPv6Interface
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricgen.cli import main
from fabricgen.observe import icsb_show
from fabricgen.pipeline import load_text
from fabricgen.source.writer import EditError, set_scalars
from support.fabrics import REPO, edit

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


# ---------------------------------------------------------------- --write changes only the addresses
# FABRIC after `--write` with THREE_AZ: az2's scalar replaced, az3's line inserted after its gateways.
def written(text: str, br: str = "\n") -> str:
    return edit(edit(text, '"169.254.100.20"', '"169.254.100.2"'),
                f"      - gw-az3{br}", f"      - gw-az3{br}    transitAddress: 169.254.100.3{br}")


def write(fabric: Path, capsys: pytest.CaptureFixture[str], show: Path = THREE_AZ) -> tuple[int, str, str]:
    return transit([str(fabric), str(show), "--write"], capsys)


def test_write_keeps_crlf_bom_directives_markers_and_trailing_whitespace(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = (FABRIC.replace("metadata:\n", "metadata:   \n")  # trailing whitespace
            .replace("# re-read after every IC rebuild", "# re-read after every IC rebuild \t")
            .replace("gatewayNodes: [gw-az2]", "gatewayNodes: [gw-az2,gw-b2,  gw-c2, " +
                     ", ".join(f"gw-{i:03}-with-a-long-node-name" for i in range(12)) + "]"))
    text = "\ufeff%YAML 1.2\n---\n" + body + "...\n"
    path = tmp_path / "fabric.yaml"
    path.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    code, _out, err = write(path, capsys)
    assert code == 3, err
    assert path.read_bytes() == written(text.replace("\n", "\r\n"), "\r\n").encode("utf-8")


ROUTE_VIA_AZ2 = "    defaultVpc:\n      staticRoutes:\n        - {cidr: 10.99.0.0/16, nextHopIP: *az2}\n"
DNS_AT_AZ2 = ("    vpcs:\n      - name: t1\n        subnets:\n"
              "          - {name: s1, cidr: 10.200.0.0/24, dnsServers: [*az2]}\n")


def test_write_an_anchored_address_moves_its_aliases_in_route_next_hops(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The route of az3 goes through az2's transit address: after the rebuild it must go
    # through the new one, which is what the alias says.
    text = edit(FABRIC, 'transitAddress: "169.254.100.20"', 'transitAddress: &az2 "169.254.100.20"') + ROUTE_VIA_AZ2
    path = tmp_path / "fabric.yaml"
    path.write_text(text)
    code, _out, err = write(path, capsys)
    assert code == 3, err
    assert path.read_text() == written(text)
    fabric, _source, _warnings = load_text(path.read_text(), "fabric.yaml")
    assert [str(z.transit_address) for z in fabric.zones] == ["169.254.100.1", "169.254.100.2", "169.254.100.3"]
    assert str(fabric.zones[2].default_vpc.static_routes[0].next_hop_ip) == "169.254.100.2"


def test_write_an_aliased_address_changes_its_anchor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # az1's route names the address first (the anchor); az2's transitAddress is its alias.
    route = "    defaultVpc:\n      staticRoutes:\n        - {cidr: 10.98.0.0/16, nextHopIP: &az2 169.254.100.20}\n"
    text = edit(edit(FABRIC, "      cidr: 172.30.10.0/24\n", "      cidr: 172.30.10.0/24\n" + route),
                'transitAddress: "169.254.100.20"', "transitAddress: *az2")
    path = tmp_path / "fabric.yaml"
    path.write_text(text)
    code, _out, err = write(path, capsys)
    assert code == 3, err
    assert path.read_text() == edit(written(text.replace("*az2", '"169.254.100.20"')),
                                    '"169.254.100.2"', "*az2").replace("&az2 169.254.100.20", "&az2 169.254.100.2")
    fabric, _source, _warnings = load_text(path.read_text(), "fabric.yaml")
    assert str(fabric.zones[1].transit_address) == "169.254.100.2"
    assert str(fabric.zones[0].default_vpc.static_routes[0].next_hop_ip) == "169.254.100.2"


def test_write_refuses_an_alias_that_would_carry_the_new_address_elsewhere(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A DNS server that happens to share az2's old address is not az2's transit address.
    text = edit(FABRIC, 'transitAddress: "169.254.100.20"', 'transitAddress: &az2 "169.254.100.20"') + DNS_AT_AZ2
    path = tmp_path / "fabric.yaml"
    path.write_text(text)
    code, _out, err = write(path, capsys)
    assert code == 1
    line = text.splitlines().index("          - {name: s1, cidr: 10.200.0.0/24, dnsServers: [*az2]}") + 1
    assert f"fabric.yaml:{line}:58: zones[2].vpcs[0].subnets[0].dnsServers[0]: is the same node as " \
           "zones[1].transitAddress (through the anchor at 23:21), so it would change to 169.254.100.2 too" in err
    assert "left unchanged" in err and "Traceback" not in err
    assert path.read_text() == text


def test_write_edits_a_value_that_comes_from_a_merge_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = edit(edit(FABRIC, "  - name: az2\n    platform: kube-ovn\n",
                     "  - <<: {platform: kube-ovn, transitAddress: '169.254.100.20'}\n    name: az2\n"),
                '    transitAddress: "169.254.100.20"\n', "")
    path = tmp_path / "fabric.yaml"
    path.write_text(text)
    code, _out, err = write(path, capsys)
    assert code == 3, err
    assert path.read_text() == edit(text, "'169.254.100.20'", "'169.254.100.2'").replace(
        "      - gw-az3\n", "      - gw-az3\n    transitAddress: 169.254.100.3\n")


@pytest.mark.parametrize(("written_as", "becomes"), [
    ("169.254.100.20", "169.254.100.2"),
    ("'169.254.100.20'", "'169.254.100.2'"),
    ('"169.254.\\x3100.20"', '"169.254.100.2"'),
    ('"169.254.\\\n      100.20"', '"169.254.100.2"'),
    ("|-\n      169.254.100.20", "|-\n      169.254.100.2"),
    (">-\n      169.254.100.20\n", ">-\n      169.254.100.2\n"),
    ("&a 169.254.100.20", "&a 169.254.100.2"),
])
def test_write_keeps_the_style_of_the_scalar(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             written_as: str, becomes: str) -> None:
    text = edit(FABRIC, '"169.254.100.20"', written_as)
    path = tmp_path / "fabric.yaml"
    path.write_text(text)
    code, _out, err = write(path, capsys)
    assert code == 3, err
    assert path.read_text() == written(edit(text, written_as, '"169.254.100.20"')).replace('"169.254.100.2"', becomes)


def test_write_fills_a_key_without_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = edit(FABRIC, "      - gw-az3\n", "      - gw-az3\n    transitAddress:   # to come: a: b\n")
    path = tmp_path / "fabric.yaml"
    path.write_text(text)
    code, _out, err = write(path, capsys)
    assert code == 3, err
    assert path.read_text() == edit(edit(text, '"169.254.100.20"', '"169.254.100.2"'),
                                    "transitAddress:   #", "transitAddress: 169.254.100.3   #")


def test_write_inserts_into_a_flow_mapping(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    zone = ("  - {name: az3, platform: kube-ovn, gatewayNodes: [gw-az3],   # the last zone\n"
            "     cluster: {podCIDR: 10.58.0.0/16}, backbone: {cidr: 172.30.30.0/24}}")
    text = FABRIC[: FABRIC.index("  - name: az3\n")] + zone  # and no final line break
    path = tmp_path / "fabric.yaml"
    path.write_text(text)
    code, _out, err = write(path, capsys)
    assert code == 3, err
    assert path.read_text() == edit(edit(text, '"169.254.100.20"', '"169.254.100.2"'),
                                    "[gw-az3],", "[gw-az3], transitAddress: 169.254.100.3,")


def test_write_inserts_before_a_missing_final_line_break(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # az3 ends the file with its gateways, and the file has no final line break
    text = FABRIC[: FABRIC.index("    gatewayNodes:\n      - gw-az3\n")] + \
        "    cluster: {podCIDR: 10.58.0.0/16}\n    backbone: {cidr: 172.30.30.0/24}\n    gatewayNodes:\n      - gw-az3"
    path = tmp_path / "fabric.yaml"
    path.write_bytes(text.replace("\n", "\r\n").encode())
    code, _out, err = write(path, capsys)
    assert code == 3, err
    assert path.read_bytes() == (edit(text, '"169.254.100.20"', '"169.254.100.2"') +
                                 "\n    transitAddress: 169.254.100.3").replace("\n", "\r\n").encode()


# ---------------------------------------------------------------- --write: the file itself
def test_write_through_a_symlink_replaces_its_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    real_dir, link_dir = tmp_path / "shared", tmp_path / "site"
    real_dir.mkdir()
    link_dir.mkdir()
    real = real_dir / "fabric.yaml"
    real.write_text(FABRIC)
    real.chmod(0o640)
    link = link_dir / "fabric.yaml"
    link.symlink_to(Path("..") / "shared" / "fabric.yaml")
    code, _out, err = write(link, capsys)
    assert code == 3, err
    assert link.is_symlink() and os.readlink(link) == os.path.join("..", "shared", "fabric.yaml")
    assert real.read_text() == written(FABRIC)
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in real_dir.iterdir()) == ["fabric.yaml"]
    assert sorted(p.name for p in link_dir.iterdir()) == ["fabric.yaml"]


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_write_keeps_the_owner_and_group(fabric: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.chown(fabric, 4242, 4343)
    fabric.chmod(0o664)
    code, _out, err = write(fabric, capsys)
    assert code == 3, err
    status = fabric.stat()
    assert (status.st_uid, status.st_gid, stat.S_IMODE(status.st_mode)) == (4242, 4343, 0o664)
    assert fabric.read_text() == written(FABRIC)


def test_write_refuses_a_file_with_other_hard_links(fabric: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "copy.yaml"
    os.link(fabric, other)
    code, _out, err = write(fabric, capsys)
    assert code == 1
    assert "has 2 hard links" in err and "left unchanged" in err
    assert fabric.read_text() == FABRIC and os.path.samefile(fabric, other)


def unprivileged(args: list[str]) -> subprocess.CompletedProcess[str]:
    """`fabricgen ARGS` in a process the file permissions apply to: as root, one without the
    capabilities that override them (util-linux setpriv), else the user running the tests."""
    command = [sys.executable, "-m", "fabricgen", *args]
    if os.geteuid() == 0:
        command = ["setpriv", "--inh-caps=-all",
                   "--bounding-set=-dac_override,-dac_read_search,-fowner,-chown", "--", *command]
    return subprocess.run(command, capture_output=True, text=True, check=False)


needs_setpriv = pytest.mark.skipif(os.geteuid() == 0 and shutil.which("setpriv") is None,
                                   reason="dropping root's capabilities needs setpriv (util-linux)")


@pytest.mark.lab
@needs_setpriv
def test_write_in_a_read_only_directory_is_refused(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    path = site / "fabric.yaml"
    path.write_text(FABRIC)
    site.chmod(0o555)
    try:
        done = unprivileged(["transit", str(path), str(THREE_AZ), "--write"])
    finally:
        site.chmod(0o755)
    assert done.returncode == 1, done.stderr
    assert f"cannot write {path.as_posix()}: no file can be created in {site.as_posix()} (Permission denied)" \
        in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert path.read_text() == FABRIC
    assert sorted(p.name for p in site.iterdir()) == ["fabric.yaml"]


@pytest.mark.lab
@pytest.mark.skipif(os.geteuid() != 0, reason="a file of another user needs root to set up")
@needs_setpriv
def test_write_refuses_a_file_whose_owner_it_cannot_keep(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    site.chmod(0o777)
    path = site / "fabric.yaml"
    path.write_text(FABRIC)
    path.chmod(0o666)
    os.chown(path, 4242, 4242)
    done = unprivileged(["transit", str(path), str(THREE_AZ), "--write"])
    assert done.returncode == 1, done.stderr
    assert f"cannot write {path.as_posix()}: it belongs to user 4242, group 4242" in done.stderr
    assert "Traceback" not in done.stderr
    assert path.read_text() == FABRIC and path.stat().st_uid == 4242
    assert sorted(p.name for p in site.iterdir()) == ["fabric.yaml"]


# ---------------------------------------------------------------- captures that are refused
def az_block(az: str, ip: str, *, port: str | None = None, ts: str = "ts") -> str:
    return (f"availability-zone {az}\n    gateway gw-{az}\n        hostname: gw-{az}\n"
            f"        port {port or 'ts-' + az}\n            transit switch: {ts}\n"
            f'            address: ["00:00:a9:fe:64:0{az[-1]} {ip}"]\n')


THREE = "".join(az_block(f"az{i}", f"169.254.100.{i}/24") for i in (1, 2, 3))


@pytest.mark.parametrize(("show", "line", "message"), [
    (THREE + az_block("az2", "169.254.100.9/24"), 19,
     "availability zone az2 is listed twice (first at line 7)"),
    (THREE + az_block("az2", "169.254.100.2/24").split("\n", 1)[1].replace("gw-az2", "gw2-az2").replace(
        "169.254.100.2/24", "169.254.100.9/24"), 21,
     "port ts-az2 on transit switch ts is listed twice (first at line 10) with another zone or address "
     "(az2: 00:00:a9:fe:64:02 169.254.100.2/24; here az3: 00:00:a9:fe:64:02 169.254.100.9/24)"),
    (THREE.replace("        port ts-az2\n", "        port ts-az2\n").replace(
        "availability-zone az3\n", "    gateway gw2-az2\n        port ts-az2b\n            transit switch: ts\n"
        '            address: ["00:00:a9:fe:64:0b 169.254.100.9/24"]\navailability-zone az3\n'), 14,
     "availability zone az2 has two ports on transit switch ts with different addresses: ts-az2 "
     "(169.254.100.2/24, line 10) and ts-az2b (169.254.100.9/24)"),
    (THREE.replace("169.254.100.2/24", "169.254.100.255/24"), 12,
     "port ts-az2 on transit switch ts: 169.254.100.255 is the broadcast address of 169.254.100.0/24"),
    (THREE.replace("169.254.100.2/24", "169.254.100.2/32"), 12,
     "port ts-az2 on transit switch ts: 169.254.100.2/32 is a /32"),
    (THREE.replace("169.254.100.2/24", "169.254.100.2"), 12,
     "169.254.100.2 has no prefix length; `ovn-ic-sbctl show` lists every address as IP/LEN"),
])
def test_an_ambiguous_or_impossible_capture_is_refused(fabric: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       show: str, line: int, message: str) -> None:
    capture = tmp_path / "show.txt"
    capture.write_text(show)
    code, out, err = write(fabric, capsys, capture)
    assert (code, out) == (1, "")
    assert f"{capture}:{line}: " in err and message in err, err
    assert fabric.read_text() == FABRIC


def test_a_port_listed_twice_alike_counts_once(fabric: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    capture = tmp_path / "show.txt"
    capture.write_text(THREE + "    gateway gw2-az3\n" + az_block("az3", "169.254.100.3/24").split("\n", 2)[2])
    code, _out, err = write(fabric, capsys, capture)
    assert code == 3, err
    assert fabric.read_text() == written(FABRIC)


def test_the_network_address_is_an_address_kube_ovn_picks(fabric: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # kubeovn/kube-ovn pkg/util/net.go GenerateRandomIP: the subnet's first address plus a
    # random offset in [0, 128) for a /24, so .0 is one of the addresses a zone can get.
    capture = tmp_path / "show.txt"
    capture.write_text(THREE.replace("169.254.100.2/24", "169.254.100.0/24"))
    code, _out, err = write(fabric, capsys, capture)
    assert code == 3, err
    assert fabric.read_text() == written(FABRIC).replace('"169.254.100.2"', '"169.254.100.0"')


def test_a_transit_switch_of_two_addresses_is_fine(fabric: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    capture = tmp_path / "show.txt"  # /31: both addresses are hosts (RFC 3021)
    capture.write_text(THREE.replace("/24", "/31").replace("169.254.100.3/31", "169.254.100.4/31"))
    code, out, _err = transit([str(fabric), str(capture)], capsys)
    assert code == 3 and "(unset) -> 169.254.100.4" in out


def test_a_capture_that_is_not_utf8_is_refused(fabric: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    data = THREE.encode().replace(b"hostname: gw-az2", b"hostname: gw-\xe9z2")
    capture = tmp_path / "show.txt"
    capture.write_bytes(data)
    code, out, err = write(fabric, capsys, capture)
    assert (code, out) == (1, "")
    assert f"{capture}:9:22: byte 0xe9 is not UTF-8" in err and "internal error" not in err
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    code, out, err = transit([str(fabric), "-", "--write"], capsys)
    assert (code, out) == (1, "")
    assert "<stdin>:9:22: byte 0xe9 is not UTF-8" in err
    assert fabric.read_text() == FABRIC


# ---------------------------------------------------------------- any layout: only the scalar changes
@st.composite
def layouts(draw: st.DrawFn) -> tuple[str, str]:
    """A fabric written in a random layout, and the same fabric after `--write` with THREE_AZ:
    az2's transitAddress written in some style, az3 without one, comments and trailing
    whitespace around them."""
    br = draw(st.sampled_from(["\n", "\r\n"]))
    ws = st.sampled_from(["", " ", "   "])  # ruamel.yaml refuses a tab after a value
    comment = st.sampled_from(["", "  # note", " #: a: [b]", " #\t'quoted' \"x\" \t"])
    dash_offset, after_dash, nested = draw(st.sampled_from([0, 2, 4])), draw(st.sampled_from([1, 3])), \
        draw(st.sampled_from([2, 4]))
    key = " " * (dash_offset + 1 + after_dash)
    item = " " * dash_offset + "-" + " " * after_dash
    quote = draw(st.sampled_from(["", "'", '"']))
    anchor = draw(st.sampled_from(["", "&ts2 ", "&ts2  "]))
    alias = bool(anchor) and draw(st.booleans())
    gateways_flow = draw(st.booleans())

    def lines(*parts: str) -> str:
        return "".join(p + draw(ws) + draw(comment) + br for p in parts)

    def gateways(name: str) -> tuple[str, str]:
        if gateways_flow:
            spaces = draw(ws)
            return lines(f"{key}gatewayNodes: [{spaces}{name},{spaces}gw-x]"), ""
        return lines(f"{key}gatewayNodes:") + lines(f"{key}{' ' * nested}- {name}"), ""

    head = (("\ufeff" if draw(st.booleans()) else "") + ("%YAML 1.2" + br + "---" + br if draw(st.booleans()) else "")
            + lines("apiVersion: fabricgen.io/v1alpha1", "kind: Fabric", "metadata:",
                    f"{' ' * nested}name: sample", "interconnection:", f"{' ' * nested}encapsulation: geneve",
                    f"{' ' * nested}database:", f"{' ' * nested * 2}members: [{{node: ic-1, address: 10.0.0.11}}]",
                    "zones:"))
    zone1 = lines(f"{item}name: az1", f"{key}platform: kube-ovn") + gateways("gw-az1")[0] + lines(
        f"{key}transitAddress: 169.254.100.1", f"{key}backbone: {{cidr: 172.30.10.0/24}}")
    before2 = lines(f"{item}name: az2", f"{key}platform: kube-ovn") + gateways("gw-az2")[0] + \
        (draw(comment).strip() + br if draw(st.booleans()) else "")
    scalar_line = f"{key}transitAddress:{draw(st.sampled_from([' ', '  ']))}{anchor}{quote}{{}}{quote}" \
        + draw(ws) + draw(comment) + br
    after2 = lines(f"{key}backbone:", f"{key}{' ' * nested}cidr: 172.30.20.0/24")
    zone3 = lines(f"{item}name: az3", f"{key}platform: kube-ovn") + gateways("gw-az3")[0]
    after3 = lines(f"{key}backbone:", f"{key}{' ' * nested}cidr: 172.30.30.0/24")
    if alias:
        after3 += lines(f"{key}defaultVpc:", f"{key}{' ' * nested}staticRoutes:",
                        f"{key}{' ' * nested}- {{cidr: 10.99.0.0/16, nextHopIP: *ts2}}")
    tail = "..." + br if draw(st.booleans()) else ""
    inserted = f"{key}transitAddress: 169.254.100.3{br}"
    original = head + zone1 + before2 + scalar_line.format("169.254.100.20") + after2 + zone3 + after3 + tail
    expected = head + zone1 + before2 + scalar_line.format("169.254.100.2") + after2 + zone3 + inserted + after3 + tail
    return original, expected


@settings(max_examples=80, derandomize=True, database=None, deadline=None)
@given(layouts())
def test_write_changes_nothing_but_the_addresses_in_any_layout(layout: tuple[str, str]) -> None:
    original, expected = layout
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fabric.yaml"
        path.write_bytes(original.encode("utf-8"))
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            code = main(["transit", str(path), str(THREE_AZ), "--write"])
        assert code == 3, err.getvalue()
        assert path.read_bytes() == expected.encode("utf-8")


def test_writer_changes_a_shared_scalar_only_where_every_place_may_follow() -> None:
    text = "a: &v 1.2.3.4   # anchor\nb: [*v]\nc: *v\n"
    assert set_scalars(text, {("a",): "5.6.7.8", ("c",): "5.6.7.8"}, follows=lambda p: p == ("b", 0)) == \
        "a: &v 5.6.7.8   # anchor\nb: [*v]\nc: *v\n"
    with pytest.raises(EditError) as info:
        set_scalars(text, {("a",): "5.6.7.8"}, follows=lambda p: p == ("b", 0))
    assert [(p.line, p.column, p.path) for p in info.value.problems] == [(3, 4, "c")]
    with pytest.raises(EditError) as info:
        set_scalars(text, {("a",): "5.6.7.8", ("c",): "9.9.9.9"}, follows=lambda p: True)
    assert "shares its value with a (an alias), which is to get another one" in str(info.value)


def test_writer_does_not_insert_into_a_mapping_used_twice() -> None:
    with pytest.raises(EditError) as info:
        set_scalars("a: &m {x: 1}\nb:\n  - *m\n", {("a", "y"): "2"})
    assert [(p.line, p.column, p.path) for p in info.value.problems] == [(3, 5, "b[0]")]
    assert "y would be added here too" in info.value.problems[0].message


def test_writer_leaves_tagged_scalars_alone() -> None:
    with pytest.raises(EditError) as info:
        set_scalars("a:\n  b: !!str 1.2.3.4\n", {("a", "b"): "5.6.7.8"})
    assert [(p.line, p.column, p.path) for p in info.value.problems] == [(2, 6, "a.b")]
    assert "explicit YAML tag" in info.value.problems[0].message


def test_writer_refuses_a_recursive_alias() -> None:
    with pytest.raises(EditError) as info:
        set_scalars("a: &m {x: 1, y: *m}\n", {("a", "x"): "2"})
    assert [(p.line, p.column) for p in info.value.problems] == [(1, 17)]
    assert "refers to a mapping or list that contains it" in str(info.value)


def test_writer_refuses_a_shared_scalar_used_as_a_key() -> None:
    with pytest.raises(EditError) as info:
        set_scalars("a: &v 1.2.3.4\nb:\n  *v : x\n", {("a",): "5.6.7.8"}, follows=lambda p: True)
    assert [(p.line, p.column, p.path) for p in info.value.problems] == [(3, 3, "b['1.2.3.4']")]
    assert "its key is the same node as a" in info.value.problems[0].message
