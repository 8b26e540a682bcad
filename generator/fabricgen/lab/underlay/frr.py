"""FRR in the underlay's namespaces: zebra and bgpd per host, configured from the rendered
`frr.conf` the way FRR's own start-up applies /etc/frr/frr.conf (frrinit.sh: daemons started
empty, then `vtysh -b` sends the integrated configuration to each); and the lab's own router, one
top-of-rack that peers BGP unnumbered with every uplink and routes the hosts without BGP.

Each namespace is its own FRR instance (`-N <namespace>`: sockets in /var/run/frr/<namespace>/).
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from fabricgen.lab.ovn.processes import terminate
from fabricgen.lab.underlay.namespaces import UnderlayError, run_in

DAEMONS_DIR = Path("/usr/lib/frr")
DAEMONS = ("zebra", "bgpd")
RUN_DIR = Path("/var/run/frr")
USER = "frr"
_PROFILE = re.compile(r"^frr defaults (\S+)", re.MULTILINE)


def missing() -> list[str]:
    out = [str(DAEMONS_DIR / d) for d in DAEMONS if not (DAEMONS_DIR / d).is_file()]
    if shutil.which("vtysh") is None:
        out.append("vtysh")
    with contextlib.suppress(KeyError):
        pwd.getpwnam(USER)
        return out
    return [*out, f"the {USER} user"]


def router_config(asn: int, interfaces: Sequence[str]) -> str:
    """The lab's top-of-rack: an unnumbered session on every uplink, the hosts without BGP (kernel
    routes) and its own links redistributed, ECMP."""
    lines = ["frr defaults datacenter", f"router bgp {asn}", " bgp router-id 192.0.2.254",
             " no bgp ebgp-requires-policy", " bgp bestpath as-path multipath-relax"]
    lines += [f" neighbor {i} interface remote-as external" for i in interfaces]
    lines += [" address-family ipv4 unicast", "  redistribute connected", "  redistribute kernel",
              "  maximum-paths 64", " exit-address-family"]
    return "\n".join(lines) + "\n"


class Frr:
    """The FRR instances of one lab, in `directory` (their logs and pidfiles)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.namespaces: list[str] = []
        self.version = ""

    def start(self, namespace: str, config: str) -> str | None:
        """Start zebra and bgpd in `namespace` and apply `config`; what FRR refused, or None."""
        frr = pwd.getpwnam(USER)
        run = RUN_DIR / namespace
        run.mkdir(parents=True, exist_ok=True)
        os.chown(run, frr.pw_uid, frr.pw_gid)
        os.chown(self.directory, frr.pw_uid, frr.pw_gid)
        self.namespaces.append(namespace)
        profile = _PROFILE.search(config)
        for daemon in DAEMONS:
            argv = [str(DAEMONS_DIR / daemon), "-d", "-N", namespace, "-f", "/dev/null",
                    "-i", str(self.directory / f"{namespace}-{daemon}.pid"),
                    "--log", f"file:{self.directory / f'{namespace}-{daemon}.log'}"]
            if profile:
                argv[2:2] = ["-F", profile.group(1)]
            done = run_in(namespace, argv)
            if done.returncode != 0:
                raise UnderlayError(f"{daemon} did not start in {namespace}: {done.stderr.strip()}")
        conf = self.directory / f"{namespace}.conf"
        conf.write_text(config)
        return self._apply(namespace, conf)

    def _apply(self, namespace: str, conf: Path) -> str | None:
        for _ in range(100):  # the daemons' vty sockets appear once they are up
            if all((RUN_DIR / namespace / f"{d}.vty").exists() for d in DAEMONS):
                break
            time.sleep(0.05)
        done = subprocess.run(["vtysh", "-N", namespace, "-f", str(conf)], capture_output=True, text=True,
                              check=False)
        said = [line for line in (done.stdout + done.stderr).splitlines()
                if line.strip() and "vtysh.conf" not in line]
        return "; ".join(said) if done.returncode != 0 else None

    def show(self, namespace: str, command: str) -> dict[str, object]:
        done = subprocess.run(["vtysh", "-N", namespace, "-c", command], capture_output=True, text=True,
                              check=False)
        with contextlib.suppress(ValueError):
            data = json.loads(done.stdout)
            return data if isinstance(data, dict) else {}
        return {}

    def sessions(self, namespace: str) -> dict[str, str]:
        """Each BGP neighbor of the namespace (an interface, for unnumbered) and its state."""
        summary = self.show(namespace, "show bgp summary json")
        unicast = summary.get("ipv4Unicast")
        peers = unicast.get("peers") if isinstance(unicast, dict) else None
        if not isinstance(peers, dict):
            return {}
        return {name: str(p.get("state", "?")) for name, p in peers.items() if isinstance(p, dict)}

    def stop(self) -> None:
        pids = []
        for namespace in self.namespaces:
            for daemon in DAEMONS:
                with contextlib.suppress(OSError, ValueError):
                    pids.append(int((self.directory / f"{namespace}-{daemon}.pid").read_text().strip()))
        terminate(pids, grace=0)
        for namespace in self.namespaces:
            shutil.rmtree(RUN_DIR / namespace, ignore_errors=True)
        self.namespaces.clear()


def version() -> str:
    done = subprocess.run([str(DAEMONS_DIR / "zebra"), "--version"], capture_output=True, text=True, check=False)
    match = re.search(r"version (\S+)", done.stdout + done.stderr)
    return match.group(1) if match else "?"
