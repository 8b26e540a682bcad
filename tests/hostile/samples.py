"""The sample fabrics (sites/ and tests/golden/), their baseline renders, and fabrics and
captures built for cases: an N-zone fabric, `ovn-ic-sbctl show` of a fabric's zones, a git
repository with a fabric and its output committed."""

from __future__ import annotations

import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from hostile.harness import Case, Context, Entry, Failed, Workdir, snapshot

SITE_FILE = "site/fabric.yaml"  # where a case puts the fabric it renders: named so in every file


@dataclass(frozen=True)
class Sample:
    rel: str  # e.g. sites/lab/fabric.yaml
    text: str

    @property
    def ident(self) -> str:
        return self.rel.removesuffix("/fabric.yaml").replace("/", "-")


def samples(repo: Path) -> list[Sample]:
    paths = sorted(repo.glob("sites/*/fabric.yaml")) + sorted(repo.glob("tests/golden/*/fabric.yaml"))
    return [Sample(p.relative_to(repo).as_posix(), p.read_text(encoding="utf-8")) for p in paths]


@dataclass(frozen=True)
class Baseline:
    out: Path  # output root holding the sample's site directory
    site: str
    tree: dict[str, Entry]  # snapshot of `out`


class Baselines:
    """Each sample rendered once, as a case renders it (`site/fabric.yaml` into `out`)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._done: dict[str, Baseline] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, sample: Sample) -> Baseline:
        with self._lock:
            lock = self._locks.setdefault(sample.ident, threading.Lock())
        with lock:
            if sample.ident not in self._done:
                self._done[sample.ident] = self._render(sample)
            return self._done[sample.ident]

    def _render(self, sample: Sample) -> Baseline:
        work = Workdir(self.ctx, Case("baseline", sample.ident, lambda w: None))
        work.write(SITE_FILE, sample.text)
        result = work.fabricgen("render", SITE_FILE, "-o", "out", "-q", codes={0, 3})
        if work.reasons or result.code not in (0, 3):
            raise Failed([f"the sample {sample.rel} does not render: {result.brief()}", *work.reasons])
        sites = [p.name for p in (work.path / "out").iterdir()]
        return Baseline(work.path / "out", sites[0], snapshot(work.path / "out"))


def copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target, symlinks=True)


# --- fabrics built for cases ---------------------------------------------------------------------

def mesh_fabric(name: str, zones: int, *, offset: int = 0, skip: tuple[int, ...] = (), vpcs: bool = True) -> str:
    """A fabric of `zones` Kube-OVN zones (transit addresses shifted by `offset`), each with a
    tenant VPC, without the zones numbered in `skip`."""
    lines = [
        "apiVersion: fabricgen.io/v1alpha1", "kind: Fabric", f"metadata:\n  name: {name}", "interconnection:",
        "  database:", "    zone: z1", "    members:", "      - {node: z1-node-1, address: 10.10.10.11}", "zones:",
    ]
    for i in range(1, zones + 1):
        if i in skip:
            continue
        address = f"169.254.100.{(i - 1 + offset) % 128}"  # Kube-OVN's lower half, .0 included
        lines += [
            f"  - name: z{i}", "    platform: kube-ovn", f"    gatewayNodes: [z{i}-gw-1, z{i}-gw-2]",
            f"    transitAddress: {address}",
            f"    backbone:\n      cidr: 172.{16 + i // 250}.{i % 250}.0/24",
        ]
        if vpcs:
            lines += ["    vpcs:", f"      - name: vpc-{i}", "        subnets:",
                      f"          - {{name: app-{i}, cidr: 10.{100 + i // 250}.{i % 250}.0/24}}"]
    return "\n".join(lines) + "\n"


def transit_addresses(text: str) -> dict[str, str]:
    """zone -> transitAddress of a fabric (PyYAML: the samples are plain)."""
    import yaml

    doc = yaml.safe_load(text)
    return {z["name"]: str(z["transitAddress"]) for z in doc.get("zones", []) if "transitAddress" in z}


def icsb_show(ports: list[tuple[str, str]], switch: str = "ts") -> str:
    """`ovn-ic-sbctl show` in the form of tests/data/icsb_show/three-az.txt (verbatim output of
    OVN 23.03) for (availability zone, port address with prefix) pairs, one gateway each."""
    out = []
    for i, (zone, address) in enumerate(ports, 1):
        out += [f"availability-zone {zone}", f"    gateway gw-{zone}-{i}", f"        hostname: gw-{zone}",
                "        type: geneve", f"            ip: 127.0.0.{10 + i}", f"        port {switch}-{zone}",
                f"            transit switch: {switch}",
                f'            address: ["00:00:a9:fe:64:{i:02x} {address}"]']
    return "\n".join(out) + "\n"


def git(work: Workdir, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", "-C", str(repo), "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always",
                           *args], capture_output=True, text=True, env=work.env(), check=False)
    if done.returncode != 0:
        raise Failed([f"git {' '.join(args)} failed: {done.stderr.strip()[-300:]}"])
    return done


def fabric_repository(work: Workdir, name: str, fabrics: dict[str, str], *, render: bool = True) -> Path:
    """A git repository `name` with each fabric at its path and (with `render`) its output under
    rendered/, committed."""
    repo = work.path / name
    repo.mkdir()
    git(work, repo, "init", "-q")
    for rel, text in fabrics.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    if render:
        result = work.fabricgen("render", *fabrics, "-q", cwd=repo, codes={0, 3})
        if result.code not in (0, 3):
            raise Failed([f"setting up: render failed: {result.brief()}"])
    git(work, repo, "add", "-A")
    git(work, repo, "commit", "-q", "-m", "fabrics and their output")
    return repo
