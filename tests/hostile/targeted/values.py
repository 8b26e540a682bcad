"""Values an accepted fabric must not hand to a reader that refuses them, and what the review
and the CI examples promise.

- A host address with prefix `/0` (ethernet, bridge, VLAN, loopback): refused, or accepted with
  netplan files that `netplan generate` takes.
- `inactivityProbe` past what the Connection table's integer holds, negative, fractional: refused,
  or accepted with a value ovsdb takes (0 to 2^63-1; the real database in `hostile.ovn_scripts`).
- A value with a final line break (a NAT selector `"kubernetes.io/os\\n": "linux\\n"`, names,
  addresses, CIDRs, paths, the API server): refused (a pattern must match the whole value).
- Transit addresses: a zone may hold the subnet's network address (Kube-OVN can pick it), not its
  broadcast address (FG206); a deployment neither (FG702).
- `diff --format markdown` of a 128-zone renumbering stays under GitHub's 65,536 characters and
  lists every zone; a removed zone's objects are orphaned, never deleted.
- The CI examples (repository and `fabricgen init`) install fabricgen from a git URL pinned to a
  commit, never a bare package name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hostile import diagnostics
from hostile.harness import Case, Context, Workdir
from hostile.readers import Readers
from hostile.samples import SITE_FILE, fabric_repository, git, mesh_fabric
from hostile.targeted.common import FAMILY, case, edit, sample

COMMENT_LIMIT = 65536
# Certificate paths a reader could take for something else: comment characters, quotes,
# backslashes, substitutions ($name, ${name}, %(name)s), blanks (tests/render/test_config_readers.py).
HOSTILE_PATHS = ["/etc/ovn/a;b.pem", "/etc/ovn/a#b.pem", '/etc/ovn/"quoted".pem', "/etc/ovn/back\\slash.pem",
                 "/etc/ovn/$x.pem", "/etc/ovn/${x}.pem", "/etc/ovn/$$.pem", "/etc/ovn/100%.pem", "/etc/ovn/%(x)s.pem",
                 "/etc/ovn/$(touch${IFS}PWNED).pem", "/etc/ovn/`touch${IFS}PWNED`.pem", "/etc/ovn/end\\",
                 " /etc/ovn/lead.pem", "/etc/ovn/trail.pem ", "/etc/ovn/tab\t.pem"]
_OSLO_VALUES = r"""
import json, sys
from oslo_config import cfg
conf = cfg.ConfigOpts()
keys = ["ovn_nb_private_key", "ovn_nb_certificate", "ovn_nb_ca_cert", "ovn_sb_private_key"]
conf.register_opts([cfg.StrOpt(k) for k in keys], group="ovn")
conf(args=[], default_config_files=[sys.argv[1]], default_config_dirs=[], project="hostile", use_env=False)
print(json.dumps({k: getattr(conf.ovn, k) for k in keys}))
"""
INT64_MAX = 2 ** 63 - 1


def cases(ctx: Context) -> list[Case]:
    readers = Readers(ctx, FAMILY)
    found = []
    for name, site, old, new in (
            ("bridge-address", "cloudstack", "addresses: [10.0.0.21/24]", "addresses: [10.0.0.21/0]"),
            ("vlan-address", "cloudstack", "addresses: [10.250.0.21/20]", "addresses: [10.250.0.21/0]"),
            ("loopback", "openstack-k8s", "loopback: 10.255.0.1/32", "loopback: 10.255.0.1/0"),
            ("bridge-gateway-prefix", "cloudstack", "addresses: [10.0.0.21/24]", "addresses: [0.0.0.0/0]"),
            ("ethernet-address", "openstack-k8s",
             "          - name: eth2             # external network, port of br-ex",
             "          - {name: eth2, addresses: [192.0.2.7/0]}")):
        found.append(case(f"host-prefix/{name}-slash-0",
                          lambda w, s=site, o=old, n=new: _accepted_or_refused(ctx, w, readers, s, o, n),
                          name == "bridge-address"))
    for value in ("99999999999999999999", str(INT64_MAX + 1), str(2 ** 31), "-1", "1.5", "1e12", "0x10", "true",
                  '"60000"', "0"):
        found.append(case(f"inactivity-probe/{value.strip(chr(34))}", lambda w, v=value: _probe(ctx, w, v),
                          value == "99999999999999999999"))
    selector = "            kubernetes.io/os: linux\n"
    guards = [
        ("nat-selector", "nat", selector, '            "kubernetes.io/os\\n": "linux\\n"\n'),
        ("nat-selector-value", "nat", selector, '            kubernetes.io/os: "linux\\n"\n'),
        ("zone-name", "lab", "  - name: ai\n", '  - name: "ai\\n"\n'),
        ("site-name", "lab", "  name: lab ", '  name: "lab\\n" '),
        ("transit-address", "lab", "transitAddress: 169.254.100.23", 'transitAddress: "169.254.100.23\\n"'),
        ("backbone-cidr", "lab", "cidr: 172.30.20.0/24", 'cidr: "172.30.20.0/24\\n"'),
        ("gateway-node", "lab", "gatewayNodes: [ai-node-1, ai-node-2]", 'gatewayNodes: ["ai-node-1\\n", ai-node-2]'),
        ("api-server", "openstack-k8s", "apiServer: https://10.20.1.5:6443", 'apiServer: "https://10.20.1.5:6443\\n"'),
        ("physical-network", "openstack-k8s", "physicalNetwork: physnet1  # localnet",
         'physicalNetwork: "physnet1\\n"  # localnet'),
        ("repo-url", "lab", "repoURL: https://git.example/network/fabric.git",
         'repoURL: "https://git.example/network/fabric.git\\n"'),
        ("line-separator-in-a-name", "lab", "  - name: ai\n", '  - name: "ai\\u2028"\n'),
        ("bidi-override-in-a-name", "lab", "  - name: ai\n", '  - name: "ai\\u202e"\n'),
    ]
    for name, site, old, new in guards:
        found.append(case(f"final-line-break/{name}", lambda w, s=site, o=old, n=new: _refused(ctx, w, s, o, n),
                          name == "nat-selector"))
    found += [
        case("transit-address/zone-network-address-is-taken",
             lambda w: _transit_address(ctx, w, "169.254.100.0", accepted=True)),
        case("transit-address/zone-broadcast-address-is-refused",
             lambda w: _transit_address(ctx, w, "169.254.100.255", accepted=False)),
        case("transit-address/deployment-network-address-is-refused",
             lambda w: _deployment_address(ctx, w, "169.254.100.0")),
        case("transit-address/deployment-broadcast-address-is-refused",
             lambda w: _deployment_address(ctx, w, "169.254.100.255")),
        case("review/128-zone-renumbering-fits-one-comment", lambda w: _big_comment(ctx, w)),
        case("review/a-removed-zone-is-orphaned-not-deleted", lambda w: _removed_zone(ctx, w), True),
        case("ci-examples/install-fabricgen-pinned-to-a-commit", lambda w: _ci_examples(ctx, w), True),
    ]
    for i, path in enumerate(HOSTILE_PATHS):
        found.append(case(f"hostile-certificate-path/{i:02d}-read-back-by-oslo-config-and-gcfg",
                          lambda w, p=path: _read_back(ctx, w, p), i == 0))
    return found


def _render(work: Workdir, text: str) -> tuple[int, str]:
    work.write(SITE_FILE, text)
    result = work.fabricgen("render", SITE_FILE, "-o", "out")
    if result.code == 1:
        for problem in diagnostics.problems(result.err, SITE_FILE, text):
            work.fail(f"refused, but: {problem}")
        work.check(not (work.path / "out").exists(), "render refused the fabric and wrote")
    return result.code, result.err


def _accepted_or_refused(ctx: Context, work: Workdir, readers: Readers, site: str, old: str, new: str) -> str:
    code, _err = _render(work, edit(sample(ctx, site), old, new))
    if code == 1:
        return "refused"
    if code in (0, 3):
        for problem in readers.read_tree(work.path / "out" / site):
            work.fail(f"accepted, and a reader refuses the output: {problem}")
    return "accepted"


def _probe(ctx: Context, work: Workdir, value: str) -> None:
    text = edit(sample(ctx, "cloudstack"), "      clientNetworks: [10.0.0.0/24]\n",
                f"      clientNetworks: [10.0.0.0/24]\n      inactivityProbe: {value}\n")
    code, _err = _render(work, text)
    if code in (0, 3):
        scripts = list((work.path / "out").rglob("configure-ovn-central.sh"))
        # `ensure_connection CTL READER TABLE TARGET PROBE`: the probe is the call's last word
        probes = {int(m) for s in scripts for m in re.findall(r"^ensure_connection (?:\S+ )+(-?\d+)$", s.read_text(),
                                                               re.MULTILINE)}
        bad = sorted(p for p in probes if not 0 <= p <= INT64_MAX)
        work.check(not bad, f"inactivityProbe: {value} is accepted and the script sets {bad}, which no Connection "
                            "row holds (an integer of 0 to 2^63-1): the script fails half-way")
        work.check(bool(probes) or not scripts, "no inactivity probe found in the controller script")


def _refused(ctx: Context, work: Workdir, site: str, old: str, new: str) -> None:
    code, _err = _render(work, edit(sample(ctx, site), old, new))
    work.check(code == 1, f"render of a value with a final line break or a format character exits {code}, "
                          "not 1 (refused)")


def _transit_address(ctx: Context, work: Workdir, address: str, accepted: bool) -> None:
    code, err = _render(work, edit(sample(ctx, "lab"), "transitAddress: 169.254.100.23", f"transitAddress: {address}"))
    if accepted:
        work.check(code in (0, 3), f"a zone's transit address {address} is refused: {err.strip()[-200:]}")
    else:
        work.check(code == 1 and ("[FG206]" in err or "[FG208]" in err),
                   f"a zone's transit address {address} is not refused (FG206 or FG208)")


def _deployment_address(ctx: Context, work: Workdir, address: str) -> None:
    code, err = _render(work, edit(sample(ctx, "openstack-k8s"), "transitAddress: 169.254.100.200",
                                   f"transitAddress: {address}"))
    work.check(code == 1 and ("[FG702]" in err or "[FG703]" in err),
               f"a deployment's transit address {address} is not refused (FG702/FG703): exit {code}")


def _big_comment(ctx: Context, work: Workdir) -> None:
    zones = 128
    repo = fabric_repository(work, "repo", {"sites/mesh/fabric.yaml": mesh_fabric("mesh", zones)}, render=False)
    (repo / "sites/mesh/fabric.yaml").write_text(mesh_fabric("mesh", zones, offset=7))
    result = work.fabricgen("diff", "sites/mesh/fabric.yaml", "--format", "markdown", "--no-verify", cwd=repo,
                            timeout=300)
    work.check(result.code == 3, f"diff of a renumbering exits {result.code}, not 3")
    size = len(result.out)
    work.check(size <= COMMENT_LIMIT, f"the comment has {size} characters, over GitHub's {COMMENT_LIMIT}")
    missing = [f"z{i}" for i in range(1, zones + 1) if not re.search(rf"\bz{i}\b", result.out)]
    work.check(not missing, f"the comment does not name zones {missing[:5]}")


def _removed_zone(ctx: Context, work: Workdir) -> None:
    lab = sample(ctx, "lab")
    repo = fabric_repository(work, "repo", {"sites/lab/fabric.yaml": lab}, render=False)
    start, end = lab.index("  - name: dr\n"), lab.index("delivery:")
    (repo / "sites/lab/fabric.yaml").write_text(lab[:start] + "\n" + lab[end:])
    result = work.fabricgen("diff", "sites/lab/fabric.yaml", "--format", "json", "--no-verify", cwd=repo)
    work.check(result.code == 3, f"diff of a removed zone exits {result.code}, not 3")
    try:
        report = json.loads(result.out)
    except ValueError:
        work.fail("diff --format json printed no JSON")
        return
    row = next((z for z in report.get("zones", []) if z.get("zone") == "dr"), None)
    if work.check(row is not None, "the removed zone has no row"):
        work.check(row.get("deleted") == 0 and row.get("orphaned", 0) > 0,
                   f"the removed zone's objects are not all orphaned: {row}")
    work.check(any("dr" in c.get("zones", []) for c in report.get("cautions", [])), "no caution names the removed zone")
    git(work, repo, "status", "--porcelain")


_INSTALL = re.compile(r"\b(?:pip3?|pipx|uv(?: pip)?)\s+install\b(?P<rest>.*)")


def _install_lines(path: Path) -> list[tuple[str, str]]:
    found = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = _INSTALL.search(line)
        rest = m["rest"].split(" #")[0] if m else ""
        if m and "fabricgen" in rest.lower():
            found.append((line.strip(), rest))
    return found


def _ci_examples(ctx: Context, work: Workdir) -> None:
    files = sorted(p for p in (ctx.repo / "deploy" / "ci").rglob("*") if p.is_file())
    init = work.fabricgen("init", "fabric-repo", "--site", "dc1", codes={0})
    if init.code == 0:
        files += sorted(p for p in (work.path / "fabric-repo" / "ci").rglob("*") if p.is_file())
    checked = 0
    for path in files:
        for line, rest in _install_lines(path):
            checked += 1
            pinned = re.search(r"git\+\S+@[0-9a-f]{40}\b", rest) or re.search(r"\$\{?[A-Z_]*FABRICGEN[A-Z_]*\}?", rest)
            work.check(bool(pinned), f"{path.name}: installs fabricgen by name, not from a git URL at a commit: {line}")
            work.check(not re.search(r"(?<![\w@/+-])fabricgen(==|>=|~=|\s|$|\")", rest.replace("fabricgen @", "")),
                       f"{path.name}: a bare package name fabricgen: {line}")
    work.check(checked > 0, "no line of the CI examples installs fabricgen")


def _read_back(ctx: Context, work: Workdir, path: str) -> str:
    """The openstack-k8s sample over ssl with a hostile certificate path: ml2_conf.ini (oslo.config)
    and ovn_k8s.conf (gcfg, read by git config) give back exactly that path."""
    quoted = json.dumps(path)
    ssl = (f"      protocol: ssl\n      ssl:\n        privateKey: {quoted}\n        certificate: {quoted}\n"
           f"        caCertificate: {quoted}\n")
    text = sample(ctx, "openstack-k8s")
    openstack = "      clientNetworks: [10.20.0.0/24, 10.255.0.0/24]   # control plane and the chassis loopbacks\n"
    for networks in (openstack, "      clientNetworks: [10.20.1.0/24, 10.255.1.0/24]\n"):
        text = edit(text, networks, networks + ssl)
    code, err = _render(work, text)
    if code == 1:
        return "refused"
    if not work.check(code in (0, 3), f"render: exit {code}: {err.strip()[-200:]}"):
        return ""
    (ini,) = list((work.path / "out").rglob("ml2_conf.ini"))
    (conf,) = list((work.path / "out").rglob("ovn_k8s.conf"))
    read = work.run([str(ctx.python), "-c", _OSLO_VALUES, str(ini)])
    if work.check(read.code == 0, f"oslo.config cannot read ml2_conf.ini: {read.err.strip()[-300:]}"):
        values = json.loads(read.out)
        work.check(set(values.values()) == {path}, f"oslo.config reads {values}, not {path!r}")
    for key in ("ovnnorth.client-privkey", "ovnnorth.client-cert", "ovnsouth.client-cacert"):
        got = work.run(["git", "config", "-f", str(conf), "--get", key])
        work.check(got.code == 0 and got.stdout.decode().removesuffix("\n") == path,
                   f"git config reads {key} as {got.out.removesuffix(chr(10))!r}, not {path!r}")
    pwned = [p for p in (work.path, work.tmp) if (p / "PWNED").exists()]
    work.check(not pwned, "reading the files ran a command")
    return "accepted and read back"
