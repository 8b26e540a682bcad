"""`transit --write` changes only the characters of the address it updates, through links,
keeping mode and owner; captures that are ambiguous or impossible are refused with nothing
written; so is a directory no file can be created in (docs/safety.md, "What transit --write changes")."""

from __future__ import annotations

import os
from pathlib import Path

from hostile.harness import NOBODY, Case, Context, Workdir, nobody_runs
from hostile.samples import icsb_show
from hostile.targeted.common import case, edit, sample

OLD, NEW = "169.254.100.23", "169.254.100.99"  # zone ai of the lab
LAB_PORTS = [("hq", "169.254.100.71/24"), ("ai", f"{NEW}/24"), ("edge", "169.254.100.52/24"),
             ("dr", "169.254.100.34/24")]


def cases(ctx: Context) -> list[Case]:
    found = []
    for name, shape in (("bom-directive-markers-crlf-trailing-blanks", _every_byte),
                        ("quoted-with-comment", _quoted), ("one-line-block-scalar", _block_scalar),
                        ("flow-mapping-zone", _flow_zone)):
        found.append(case(f"transit-write/keeps-every-other-byte-{name}",
                          lambda w, s=shape: _keeps_bytes(ctx, w, s), name.startswith("bom")))
    found += [
        case("transit-write/anchor-used-as-a-route-next-hop-moves-with-it", lambda w: _alias(ctx, w, route=True)),
        case("transit-write/anchor-used-elsewhere-is-refused", lambda w: _alias(ctx, w, route=False), True),
        case("transit-write/through-a-symlink-keeping-mode-and-owner", lambda w: _symlink(ctx, w), True),
        case("transit-write/a-file-with-another-hard-link-is-refused", lambda w: _hard_link(ctx, w)),
        case("transit-write/a-directory-it-cannot-write-is-refused", lambda w: _read_only(ctx, w), True),
        case("transit-write/an-explicitly-tagged-address-is-refused", lambda w: _tagged(ctx, w)),
    ]
    bad_captures = {
        "an-az-twice": icsb_show([*LAB_PORTS, ("ai", "169.254.100.98/24")]),
        "an-az-twice-same-address": icsb_show([*LAB_PORTS, ("ai", f"{NEW}/24")]),
        "a-port-name-twice": icsb_show(LAB_PORTS).replace("port ts-edge", "port ts-ai"),
        "broadcast-address": icsb_show([(z, "169.254.100.255/24" if z == "ai" else a) for z, a in LAB_PORTS]),
        "a-slash-32": icsb_show([(z, f"{NEW}/32" if z == "ai" else a) for z, a in LAB_PORTS]),
        "no-prefix-length": icsb_show([(z, NEW if z == "ai" else a) for z, a in LAB_PORTS]),
        "not-utf-8": icsb_show(LAB_PORTS).replace("hostname: gw-ai", "hostname: gw-\udcff\udcfe"),
        "empty": "",
        "nul-bytes": "\x00" * 100,
        "a-huge-line": "availability-zone " + "a" * 3_000_000 + "\n",
    }
    for name, capture in bad_captures.items():
        codes = {1, 3} if name == "a-huge-line" else {1}  # a zone with no port yet is reported, not refused
        found.append(case(f"transit-capture/{name}", lambda w, c=capture, k=codes: _refused_capture(ctx, w, c, k),
                          name in ("an-az-twice", "not-utf-8")))
    found.append(case("transit-capture/network-address-is-taken", lambda w: _network_address(ctx, w)))
    return found


def _write_capture(work: Workdir, capture: str) -> Path:
    return work.write("capture.txt", capture.encode("utf-8", "surrogateescape"))


def _every_byte(text: str) -> str:
    lines = text.split("\n")
    lines = [line + ("  " if i % 3 == 0 and line.strip() else "") for i, line in enumerate(lines)]
    return "\ufeff%YAML 1.2\n---\n" + "\r\n".join(lines) + "...\r\n"


def _quoted(text: str) -> str:
    return edit(text, f"transitAddress: {OLD}", f'transitAddress: "{OLD}"     # from ovn-ic-sbctl show')


def _block_scalar(text: str) -> str:
    return edit(text, f"transitAddress: {OLD}", f"transitAddress: |-\n      {OLD}")


def _flow_zone(text: str) -> str:
    """Zone ai written as one flow mapping over three lines."""
    start, end = text.index("  - name: ai\n"), text.index("  - name: edge\n")
    return text[:start] + (
        f"  - {{name: ai, platform: harvester, gatewayNodes: [ai-node-1, ai-node-2], transitAddress: {OLD},\n"
        "     cluster: {podCIDR: 10.54.0.0/16, serviceCIDR: 10.55.0.0/16, primaryPodCIDR: 10.52.0.0/16},\n"
        "     backbone: {cidr: 172.30.20.0/24, gateway: 172.30.20.1, network: {name: vsw-backbone}}}\n\n"
    ) + text[end:]


def _transit(work: Workdir, *args: str, **kwargs: object) -> tuple[int, str]:
    result = work.fabricgen("transit", "site/fabric.yaml", "capture.txt", *args, **kwargs)  # type: ignore[arg-type]
    return result.code, result.err


def _keeps_bytes(ctx: Context, work: Workdir, shape: object) -> None:
    text = shape(sample(ctx, "lab"))  # type: ignore[operator]
    fabric = work.write("site/fabric.yaml", text.encode("utf-8"))
    valid = work.fabricgen("validate", "site/fabric.yaml")
    if not work.check(valid.code == 0, f"setting up: the reshaped lab does not validate: {valid.brief()}"):
        return
    before = fabric.read_bytes()
    _write_capture(work, icsb_show(LAB_PORTS))
    code, err = _transit(work, "--write")
    work.check(code == 3, f"transit --write with one stale zone exits {code}, not 3: {err.strip()[-200:]}")
    expected = before.replace(OLD.encode(), NEW.encode())
    after = fabric.read_bytes()
    if after != expected:
        at = next((i for i, (a, b) in enumerate(zip(after, expected, strict=False)) if a != b),
                  min(len(after), len(expected)))
        work.fail(f"transit --write changed more than the address: first difference at byte {at}: "
                  f"{after[max(0, at - 20):at + 20]!r} instead of {expected[max(0, at - 20):at + 20]!r}")
    again = work.fabricgen("validate", "site/fabric.yaml")
    work.check(again.code == 0, f"the written fabric does not validate: {again.brief()}")


def _alias(ctx: Context, work: Workdir, route: bool) -> None:
    """hq's transit address anchored and used again further down; the capture moves hq."""
    old, new = "169.254.100.71", "169.254.100.72"
    text = edit(sample(ctx, "lab"), f"transitAddress: {old}", f"transitAddress: &hq {old}")
    if route:  # ai routes a range through hq's transit address: it must follow the anchor
        text = edit(text, "    backbone:\n      cidr: 172.30.20.0/24\n",
                    "    defaultVpc:\n      staticRoutes:\n        - {cidr: 192.168.77.0/24, nextHopIP: *hq}\n"
                    "    backbone:\n      cidr: 172.30.20.0/24\n")
    else:  # a DNS server that happens to share the old address must not move
        text = edit(text, "          - {name: shared-svc, cidr: 10.100.10.0/24}",
                    "          - {name: shared-svc, cidr: 10.100.10.0/24, dnsServers: [*hq]}")
    fabric = work.write("site/fabric.yaml", text)
    valid = work.fabricgen("validate", "site/fabric.yaml")
    if not work.check(valid.code == 0, f"setting up: the lab with an alias does not validate: {valid.brief()}"):
        return
    ports = [(z, f"{new}/24" if z == "hq" else (f"{OLD}/24" if z == "ai" else a)) for z, a in LAB_PORTS]
    _write_capture(work, icsb_show(ports))
    code, err = _transit(work, "--write")
    if route:
        work.check(code == 3, f"transit --write exits {code}, not 3: {err.strip()[-200:]}")
        work.check(fabric.read_text() == text.replace(f"&hq {old}", f"&hq {new}"),
                   "transit --write did not change exactly the anchored address (the alias stays an alias)")
    else:
        work.check(code == 1, f"transit --write with the address aliased by a DNS server exits {code}, not 1")
        work.check(fabric.read_text() == text, "transit --write changed the fabric it refused to write")


def _symlink(ctx: Context, work: Workdir) -> None:
    real = work.write("real/fabric.yaml", sample(ctx, "lab"), mode=0o640)
    (work.path / "site").mkdir()
    (work.path / "site" / "fabric.yaml").symlink_to("../real/fabric.yaml")
    status = real.stat()
    _write_capture(work, icsb_show(LAB_PORTS))
    code, err = _transit(work, "--write")
    work.check(code == 3, f"transit --write through a link exits {code}, not 3: {err.strip()[-200:]}")
    link = work.path / "site" / "fabric.yaml"
    work.check(link.is_symlink() and os.readlink(link) == "../real/fabric.yaml", "the fabric's link was replaced")
    now = real.stat()
    work.check(NEW in real.read_text(), "the file the link points at was not updated")
    kept = (now.st_mode & 0o7777, now.st_uid, now.st_gid) == (status.st_mode & 0o7777, status.st_uid, status.st_gid)
    work.check(kept,
               f"mode or owner changed: {oct(status.st_mode)} {status.st_uid}:{status.st_gid} -> "
               f"{oct(now.st_mode)} {now.st_uid}:{now.st_gid}")


def _hard_link(ctx: Context, work: Workdir) -> None:
    fabric = work.write("site/fabric.yaml", sample(ctx, "lab"))
    os.link(fabric, work.path / "other-name.yaml")
    before = fabric.read_bytes()
    _write_capture(work, icsb_show(LAB_PORTS))
    code, _err = _transit(work, "--write")
    work.check(code == 1, f"transit --write of a file with another hard link exits {code}, not 1")
    work.check(fabric.read_bytes() == before, "the file changed")


def _read_only(ctx: Context, work: Workdir) -> None:
    fabric = work.write("site/fabric.yaml", sample(ctx, "lab"))
    before = fabric.read_bytes()
    _write_capture(work, icsb_show(LAB_PORTS))
    site = work.path / "site"
    if os.geteuid() == 0:  # root writes anywhere: try it as the file's owner, nobody
        nobody_runs(ctx)
        nobody = NOBODY
        os.chown(fabric, nobody, nobody)
        cache = work.path / "_nobody"
        cache.mkdir(mode=0o700)
        os.chown(cache, nobody, nobody)
        code, err = _transit(work, "--write", user=nobody, env=work.env({"HOME": str(cache)},
                                                                        cache=cache / "fabricgen"))
    else:
        site.chmod(0o555)
        code, err = _transit(work, "--write")
        site.chmod(0o755)
    work.check(code == 1, f"transit --write where no file can be created exits {code}, not 1: {err.strip()[-200:]}")
    work.check(fabric.read_bytes() == before, "the file changed")


def _tagged(ctx: Context, work: Workdir) -> None:
    fabric = work.write("site/fabric.yaml", edit(sample(ctx, "lab"), f"transitAddress: {OLD}",
                                                 f"transitAddress: !!str {OLD}"))
    before = fabric.read_bytes()
    _write_capture(work, icsb_show(LAB_PORTS))
    code, _err = _transit(work, "--write")
    work.check(code == 1, f"transit --write of a tagged address exits {code}, not 1")
    work.check(fabric.read_bytes() == before, "the file changed")


def _refused_capture(ctx: Context, work: Workdir, capture: str, codes: set[int]) -> None:
    fabric = work.write("site/fabric.yaml", sample(ctx, "lab"))
    before = fabric.read_bytes()
    _write_capture(work, capture)
    code, _err = _transit(work, "--write")
    work.check(code in codes, f"transit --write with this capture exits {code}, not {sorted(codes)} (refused)")
    work.check(fabric.read_bytes() == before, "the fabric changed although the capture was refused")


def _network_address(ctx: Context, work: Workdir) -> None:
    fabric = work.write("site/fabric.yaml", sample(ctx, "lab"))
    _write_capture(work, icsb_show([(z, "169.254.100.0/24" if z == "ai" else a) for z, a in LAB_PORTS]))
    code, err = _transit(work, "--write")
    work.check(code == 3, f"transit --write of the subnet's network address exits {code}, not 3: {err[-200:]}")
    work.check("transitAddress: 169.254.100.0\n" in fabric.read_text(), "the network address was not written")
