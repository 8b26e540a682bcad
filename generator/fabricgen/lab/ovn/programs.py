"""Which OVN and Open vSwitch programs the lab runs, and which versions they are.

The programs come from a prefix: `FABRICGEN_OVN_PREFIX` (or `verify --ovn-prefix DIR`)
names a directory with `bin/` (and `sbin/`) holding the programs and `share/ovn/` and
`share/openvswitch/` holding the schemas, the layout of `/usr`. Without it the lab uses
the system's programs: `PATH`, then `/usr/local/sbin`, `/usr/sbin` and `/sbin` (where
Debian puts `ovsdb-server` and `ovs-vswitchd`), with the schemas of `/usr/share`.

`scripts/setup.sh --test` makes such a prefix of Debian 13's OVN 25.03 and OVS 3.5 in
`.ovn/25.03/` of the repository: the `.deb` files extracted into `root/`, and in `bin/` one
small shell script per program that starts it through the loader shipped in the extracted
`libc6`, with the extracted libraries only (so they run on Debian 12 as they are).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PREFIX_VARIABLE = "FABRICGEN_OVN_PREFIX"
SYSTEM_DIRS = ("/usr/local/sbin", "/usr/sbin", "/sbin")
CONTROL_PLANE = (
    "ovsdb-tool", "ovsdb-server", "ovn-northd", "ovn-ic", "ovn-nbctl", "ovn-sbctl",
    "ovn-ic-nbctl", "ovn-ic-sbctl", "ovn-trace",
)
DATA_PLANE = ("ovs-vswitchd", "ovs-vsctl", "ovn-controller")
OVN_SCHEMAS = ("ovn-nb.ovsschema", "ovn-sb.ovsschema", "ovn-ic-nb.ovsschema", "ovn-ic-sb.ovsschema")
OVS_SCHEMA = "vswitch.ovsschema"
_VERSION = re.compile(r"(\d+\.\d+\.\d+)")


@dataclass(frozen=True)
class Programs:
    """The OVN/OVS programs of one prefix (None: the system's)."""

    prefix: Path | None = None

    @classmethod
    def from_environment(cls) -> Programs:
        value = os.environ.get(PREFIX_VARIABLE, "")
        return cls(Path(value).resolve() if value else None)

    @property
    def name(self) -> str:
        return str(self.prefix) if self.prefix is not None else "the system's"

    def search_path(self) -> str:
        """PATH for the lab's processes (and the rendered scripts it runs): the prefix first."""
        dirs = [d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if d]
        if self.prefix is not None:
            return os.pathsep.join([str(self.prefix / "bin"), str(self.prefix / "sbin"), *dirs])
        return os.pathsep.join([*dirs, *(d for d in SYSTEM_DIRS if d not in dirs)])

    @property
    def ovn_schemas(self) -> Path:
        return (self.prefix or Path("/usr")) / "share" / "ovn"

    @property
    def ovs_schema(self) -> Path:
        return (self.prefix or Path("/usr")) / "share" / "openvswitch" / OVS_SCHEMA

    def which(self, program: str) -> str | None:
        """Where a program is: with a prefix only there, else on the system's search path."""
        if self.prefix is not None:
            return shutil.which(program, path=os.pathsep.join([str(self.prefix / "bin"), str(self.prefix / "sbin")]))
        return shutil.which(program, path=self.search_path())

    def missing(self, *, data_plane: bool = False) -> list[str]:
        """Programs and schemas the lab needs that are not there (empty when it can run)."""
        wanted = CONTROL_PLANE + (DATA_PLANE if data_plane else ())
        gone = [p for p in wanted if self.which(p) is None]
        gone += [str(self.ovn_schemas / s) for s in OVN_SCHEMAS if not (self.ovn_schemas / s).is_file()]
        if data_plane and not self.ovs_schema.is_file():
            gone.append(str(self.ovs_schema))
        return gone

    def versions(self) -> tuple[str, str]:
        """(OVN, OVS) versions, as `ovn-nbctl --version` and `ovsdb-server --version` print them."""
        return _versions(self.search_path())


@cache
def _versions(search: str) -> tuple[str, str]:
    def version(program: str) -> str:
        path = shutil.which(program, path=search)
        if path is None:
            return "unknown"
        out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False,
                             stdin=subprocess.DEVNULL).stdout
        match = _VERSION.search(out.splitlines()[0] if out else "")
        return match[1] if match else "unknown"

    return version("ovn-nbctl"), version("ovsdb-server")


def release(version: str) -> tuple[int, int] | None:
    """(major, minor) of a version such as `25.03.0`."""
    match = re.match(r"^(\d+)\.(\d+)", version)
    return (int(match[1]), int(match[2])) if match else None


def zones_ovn(kube_ovn: tuple[int, int] | None) -> str | None:
    """The OVN release Kube-OVN's images of a release carry (`dist/images/Dockerfile.base`):
    1.15 and later build branch-25.03, 1.13 and 1.14 build 24.03; None when unknown."""
    if kube_ovn is None:
        return None
    if kube_ovn >= (1, 15):
        return "25.03"
    if kube_ovn >= (1, 13):
        return "24.03"
    return None
