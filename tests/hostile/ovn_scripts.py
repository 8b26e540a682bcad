"""Family `ovn-scripts`: the rendered host scripts against real OVN databases.

Each case starts its own ovsdb-server processes (OVN NB, SB, IC NB, IC SB, Open_vSwitch from the
Debian schemas) listening only on unix sockets in its private directory (no `--remote=db:...`,
so a Connection row a script writes never opens a port), and, where the transit switch must
come from the IC side, the real `ovn-ic` daemon; all are stopped by their process ids when the
case ends. Held (docs/host-output.md):

- `configure-ovn-central.sh` run twice: exit 0, and the second run changes nothing;
- an operator's listener on the same port (`pssl:6641`, `ptcp:6641:<address>`, `ptcp:6641`):
  refused with nothing changed, or left as it was with no second listener on its port; another
  port or a unix socket is left alone;
- a refused run changes nothing in any database (no `NB_Global`, `SB_Global`, `IC_SB_Global`
  created);
- hostile certificate paths (`$(...)`, quotes, `;`, a backslash) reach the SSL row unchanged
  and run nothing;
- an accepted `inactivityProbe` is applied, or the script stops before its first write;
- `configure-ovn-ic.sh` keeps an operator's `ic-route-adv` / `ic-route-learn`, and a refused
  run changes nothing;
- `configure-ovn-host.sh` run twice: exit 0, the second run changes nothing.

Skipped, saying which program is missing, without the OVN programs.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from types import TracebackType

from hostile.harness import Case, Context, Failed, Skip, Workdir
from hostile.samples import SITE_FILE
from hostile.targeted.common import edit

FAMILY = "ovn-scripts"
SCHEMAS = {
    "nb": Path("/usr/share/ovn/ovn-nb.ovsschema"),
    "sb": Path("/usr/share/ovn/ovn-sb.ovsschema"),
    "icnb": Path("/usr/share/ovn/ovn-ic-nb.ovsschema"),
    "icsb": Path("/usr/share/ovn/ovn-ic-sb.ovsschema"),
    "ovs": Path("/usr/share/openvswitch/vswitch.ovsschema"),
}
TOOLS = ("ovsdb-server", "ovsdb-tool", "ovsdb-client", "ovn-nbctl", "ovn-sbctl", "ovn-ic-nbctl", "ovn-ic-sbctl",
         "ovn-ic", "ovs-vsctl")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
HOSTILE_PATHS = ("/etc/ovn/$(touch${IFS}PWNED).pem", "/etc/ovn/a;b'c\"d.pem",
                 "/etc/ovn/back\\slash`touch${IFS}PWNED`.pem")


def missing() -> list[str]:
    gone = [t for t in TOOLS if shutil.which(t, path=os.environ.get("PATH", "") + ":" + PATH) is None]
    return gone + [str(s) for s in SCHEMAS.values() if not s.exists()]


def cases(ctx: Context) -> list[Case]:
    found = [Case(FAMILY, "central-twice-changes-nothing", lambda w: _central_twice(ctx, w), quick=True)]
    for target, same_port in (("pssl:6641", True), ("ptcp:6641:10.0.0.10", True), ("ptcp:6641:0.0.0.0", True),
                              ("ptcp:6641", True), ("pssl:16641", False), ("punix:/tmp/operator-nb.sock", False)):
        found.append(Case(FAMILY, f"central-operator-listener-{target}",
                          lambda w, t=target, s=same_port: _listener(ctx, w, t, s), quick=target == "pssl:6641"))
    found += [
        Case(FAMILY, "central-refused-run-writes-nothing", lambda w: _central_refused(ctx, w), quick=True),
        Case(FAMILY, "central-hostile-certificate-paths", lambda w: _hostile_ssl(ctx, w)),
        Case(FAMILY, "central-inactivity-probe-past-int64", lambda w: _probe(ctx, w, str(2 ** 63))),
        Case(FAMILY, "central-inactivity-probe-20-digits", lambda w: _probe(ctx, w, "99999999999999999999")),
        Case(FAMILY, "central-inactivity-probe-2-to-the-31", lambda w: _probe(ctx, w, str(2 ** 31))),
        Case(FAMILY, "ic-keeps-the-operators-route-options", lambda w: _ic_options(ctx, w)),
        Case(FAMILY, "ic-refused-run-writes-nothing", lambda w: _ic_refused(ctx, w)),
        Case(FAMILY, "host-twice-changes-nothing", lambda w: _host_twice(ctx, w)),
    ]
    return found


class Servers:
    """ovsdb-server processes (and ovn-ic) of one case, stopped by their ids on exit."""

    def __init__(self, work: Workdir) -> None:
        gone = missing()
        if gone:
            raise Skip(f"the OVN programs are missing: {', '.join(gone)}")
        self.work = work
        self.root = work.path / "db"
        self.root.mkdir()
        self.processes: list[subprocess.Popen[bytes]] = []
        self.remotes: dict[str, str] = {}
        self.names: dict[str, str] = {}

    def __enter__(self) -> Servers:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        for proc in reversed(self.processes):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.processes:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def start(self, key: str) -> str:
        directory = self.root / key
        directory.mkdir()
        schema = SCHEMAS[key]
        name = subprocess.run(["ovsdb-tool", "schema-name", str(schema)], capture_output=True, text=True,
                              check=True).stdout.strip()
        db, socket = directory / "conf.db", directory / "db.sock"
        subprocess.run(["ovsdb-tool", "create", str(db), str(schema)], check=True)
        proc = subprocess.Popen(["ovsdb-server", str(db), f"--remote=punix:{socket}",
                                 f"--unixctl={directory / 'ctl'}", "--no-chdir", f"--log-file={directory / 'log'}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.processes.append(proc)
        deadline = time.monotonic() + 20
        while not socket.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise Failed([f"ovsdb-server for {name} did not start"])
            time.sleep(0.01)
        self.remotes[key] = f"unix:{socket}"
        self.names[key] = name
        return self.remotes[key]

    def start_ovn_ic(self) -> None:
        directory = self.root / "ovn-ic"
        directory.mkdir()
        proc = subprocess.Popen(["ovn-ic", f"--ovnnb-db={self.remotes['nb']}", f"--ovnsb-db={self.remotes['sb']}",
                                 f"--ic-nb-db={self.remotes['icnb']}", f"--ic-sb-db={self.remotes['icsb']}",
                                 f"--unixctl={directory / 'ctl'}", f"--log-file={directory / 'log'}",
                                 f"--pidfile={directory / 'pid'}", "--no-chdir"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.processes.append(proc)

    def env(self) -> dict[str, str]:
        env = self.work.env({"PATH": f"{PATH}:{os.environ.get('PATH', '')}"})
        for key, variable in (("nb", "OVN_NB_DB"), ("sb", "OVN_SB_DB"), ("icnb", "OVN_IC_NB_DB"),
                              ("icsb", "OVN_IC_SB_DB")):
            if key in self.remotes:
                env[variable] = self.remotes[key]
        if "ovs" in self.remotes:
            env["OVS_RUNDIR"] = str(self.root / "ovs")
        return env

    def ctl(self, *argv: str) -> str:
        done = subprocess.run(list(argv), capture_output=True, text=True, env=self.env(), timeout=30, check=False)
        if done.returncode != 0:
            raise Failed([f"setting up: {' '.join(argv)}: {done.stderr.strip()[-300:]}"])
        return done.stdout

    def dump(self, key: str) -> str:
        return self.ctl("ovsdb-client", "dump", self.remotes[key], self.names[key])

    def dumps(self) -> dict[str, str]:
        return {key: self.dump(key) for key in self.remotes if key != "ovs"} | (
            {"ovs": self.dump("ovs")} if "ovs" in self.remotes else {})


def _tables(dump: str) -> dict[str, str]:
    """`ovsdb-client dump` output per table."""
    tables: dict[str, str] = {}
    name = ""
    for line in dump.splitlines():
        if line.endswith(" table") and " " not in line[: -len(" table")]:
            name = line[: -len(" table")]
            tables[name] = ""
        elif name:
            tables[name] += line + "\n"
    return tables


def changed(servers: Servers, before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Each database a run changed, with the tables that changed."""
    found = []
    for key in before:
        if before[key] != after.get(key):
            old, new = _tables(before[key]), _tables(after.get(key, ""))
            tables = sorted(t for t in set(old) | set(new) if old.get(t) != new.get(t))
            found.append(f"{servers.names[key]} ({', '.join(tables)})")
    return found


def _rendered(ctx: Context, work: Workdir, text: str) -> Path | None:
    """Render `text`; the output root, or None when the fabric is refused."""
    work.write(SITE_FILE, text)
    result = work.fabricgen("render", SITE_FILE, "-o", "out", "-q")
    if result.code == 1:
        return None
    if result.code not in (0, 3):
        raise Failed([f"render failed: {result.brief()}"])
    return work.path / "out"


def _script(out: Path, name: str, host: str) -> Path:
    found = sorted(p for p in out.rglob(name) if p.parent.name == host)
    if not found:
        raise Failed([f"no {name} for {host} in the output"])
    return found[0]


def _sh(work: Workdir, servers: Servers, script: Path) -> tuple[int, str]:
    result = work.run(["sh", script], env=servers.env(), timeout=180)
    if result.timed_out:
        work.fail(f"{script.name} did not end (killed)")
    return result.code, result.err


def _cloudstack(ctx: Context) -> str:
    return (ctx.repo / "sites" / "cloudstack" / "fabric.yaml").read_text()


# --- configure-ovn-central.sh --------------------------------------------------------------------

def _central_twice(ctx: Context, work: Workdir) -> None:
    out = _rendered(ctx, work, _cloudstack(ctx))
    assert out is not None
    script = _script(out, "configure-ovn-central.sh", "mgmt2")
    with Servers(work) as servers:
        servers.start("nb")
        servers.start("sb")
        code, err = _sh(work, servers, script)
        if not work.check(code == 0, f"configure-ovn-central.sh on empty databases exits {code}: {err[-300:]}"):
            return
        first = servers.dumps()
        code, err = _sh(work, servers, script)
        work.check(code == 0, f"the second run exits {code}: {err[-300:]}")
        touched = changed(servers, first, servers.dumps())
        work.check(not touched, f"the second run of configure-ovn-central.sh changed {'; '.join(touched)}")


def _listens(target: str) -> tuple[str, str] | None:
    """(port, address) a passive Connection target listens on; '' is every address."""
    m = re.fullmatch(r"p(?:tcp|ssl):(\d+)(?::(.*))?", target)
    if not m:
        return None
    address = (m.group(2) or "").strip("[]")
    return m.group(1), "" if address in ("", "0.0.0.0", "::") else address


def _listener(ctx: Context, work: Workdir, target: str, same_port: bool) -> None:
    out = _rendered(ctx, work, _cloudstack(ctx))
    assert out is not None
    script = _script(out, "configure-ovn-central.sh", "mgmt2")
    with Servers(work) as servers:
        servers.start("nb")
        servers.start("sb")
        servers.ctl("ovn-nbctl", "init")
        servers.ctl("ovn-sbctl", "init")
        servers.ctl("ovn-nbctl", "set-connection", target)  # the operator's, without fabricgen's marker
        before = servers.dumps()
        code, err = _sh(work, servers, script)
        rows = servers.ctl("ovn-nbctl", "--bare", "--columns=target", "list", "Connection").split()
        if code == 1:
            touched = changed(servers, before, servers.dumps())
            work.check(not touched, f"a refused run changed {'; '.join(touched)}")
            work.check(same_port, f"configure-ovn-central.sh refused an operator's listener on another port ({target})")
            return
        if not work.check(code == 0, f"configure-ovn-central.sh exits {code}: {err[-300:]}"):
            return
        work.check(target in rows, f"the operator's Connection {target} is gone: {rows}")
        listening = [(where, row) for row in rows if (where := _listens(row))]
        clashes = sorted({f"{a} and {b}" for i, ((p, x), a) in enumerate(listening) for (q, y), b in listening[i + 1:]
                          if p == q and (x == y or "" in (x, y))})
        work.check(not clashes, f"two NB listeners on one port: {'; '.join(clashes)} (the operator's {target} "
                                "and the script's)")


def _central_refused(ctx: Context, work: Workdir) -> None:
    """The NB holds an operator's listener on exactly the script's target; the SB is empty
    (no SB_Global yet)."""
    out = _rendered(ctx, work, _cloudstack(ctx))
    assert out is not None
    script = _script(out, "configure-ovn-central.sh", "mgmt2")
    with Servers(work) as servers:  # first learn the script's NB listener on databases of its own
        servers.start("nb")
        servers.start("sb")
        code, err = _sh(work, servers, script)
        if not work.check(code == 0, f"setting up: configure-ovn-central.sh exits {code}: {err[-300:]}"):
            return
        targets = servers.ctl("ovn-nbctl", "--bare", "--columns=target", "list", "Connection").split()
    (work.path / "db").rename(work.path / "db-learned")
    with Servers(work) as servers:
        servers.start("nb")
        servers.start("sb")
        servers.ctl("ovn-nbctl", "init")
        servers.ctl("ovn-nbctl", "set-connection", *targets)
        before = servers.dumps()
        code, _err = _sh(work, servers, script)
        work.check(code == 1, f"configure-ovn-central.sh with an operator's {targets} exits {code}, not 1 (refused)")
        touched = changed(servers, before, servers.dumps())
        work.check(not touched, f"a refused run changed {'; '.join(touched)}")


def _hostile_ssl(ctx: Context, work: Workdir) -> str:
    key, cert, ca = HOSTILE_PATHS
    ssl = (f"      protocol: ssl\n      ssl:\n        privateKey: '{key.replace(chr(39), chr(39) * 2)}'\n"
           f"        certificate: '{cert.replace(chr(39), chr(39) * 2)}'\n"
           f"        caCertificate: '{ca.replace(chr(39), chr(39) * 2)}'\n")
    tcp = "      protocol: tcp                # ssl needs an ssl: section with certificate paths\n"
    text = edit(_cloudstack(ctx), tcp, ssl)
    out = _rendered(ctx, work, text)
    if out is None:
        return "the fabric with these paths is refused"
    script = _script(out, "configure-ovn-central.sh", "mgmt2")
    with Servers(work) as servers:
        servers.start("nb")
        servers.start("sb")
        code, err = _sh(work, servers, script)
        work.check(code == 0, f"configure-ovn-central.sh with hostile certificate paths exits {code}: {err[-300:]}")
        for tool in ("ovn-nbctl", "ovn-sbctl"):
            got = [servers.ctl(tool, "--if-exists", "get", "SSL", ".", column).strip()
                   for column in ("private_key", "certificate", "ca_cert")] if code == 0 else []
            values = []
            for value in got:
                done = subprocess.run(["python3", "-c", "import json,sys; print(json.loads(sys.argv[1]))", value],
                                      capture_output=True, text=True, check=False)
                values.append(done.stdout.rstrip("\n") if done.returncode == 0 else value)
            if code == 0:
                work.check(values == list(HOSTILE_PATHS), f"{tool}: the SSL row holds {values}, not the fabric's paths")
    pwned = [p for p in (work.path, Path("/tmp"), work.tmp) if (p / "PWNED").exists()]
    work.check(not pwned, f"a certificate path ran a command: {pwned}")
    return "accepted and applied"


def _probe(ctx: Context, work: Workdir, value: str) -> str:
    text = edit(_cloudstack(ctx), "      clientNetworks: [10.0.0.0/24]\n",
                f"      clientNetworks: [10.0.0.0/24]\n      inactivityProbe: {value}\n")
    out = _rendered(ctx, work, text)
    if out is None:
        return "refused"
    script = _script(out, "configure-ovn-central.sh", "mgmt2")
    with Servers(work) as servers:
        servers.start("nb")
        servers.start("sb")
        before = servers.dumps()
        code, err = _sh(work, servers, script)
        if code == 0:
            probes = servers.ctl("ovn-nbctl", "--bare", "--columns=inactivity_probe", "list", "Connection").split()
            work.check(value in probes, f"inactivityProbe {value} was accepted and the Connection holds {probes}")
            return "accepted and applied"
        touched = changed(servers, before, servers.dumps())
        work.check(not touched, f"inactivityProbe {value}: the script failed (exit {code}) after writing to "
                                f"{'; '.join(touched)} (half applied): {err.strip()[-200:]}")
        return f"accepted, the script refuses it (exit {code})"


# --- configure-ovn-ic.sh -------------------------------------------------------------------------

def _openstack(ctx: Context) -> str:
    return (ctx.repo / "sites" / "openstack-k8s" / "fabric.yaml").read_text()


def _ic_setup(servers: Servers, *, init: bool) -> None:
    for key in ("nb", "sb", "icnb", "icsb"):
        servers.start(key)
    servers.ctl("ovn-ic-nbctl", "init")
    servers.ctl("ovn-ic-nbctl", "ts-add", "ts")
    if init:
        servers.ctl("ovn-ic-sbctl", "init")
        servers.ctl("ovn-nbctl", "init")
        servers.ctl("ovn-sbctl", "init")


def _ic_options(ctx: Context, work: Workdir) -> None:
    out = _rendered(ctx, work, _openstack(ctx))
    assert out is not None
    script = _script(out, "configure-ovn-ic.sh", "ctl1")
    with Servers(work) as servers:
        _ic_setup(servers, init=True)
        servers.ctl("ovn-nbctl", "set", "NB_Global", ".", "options:ic-route-adv=true", "options:ic-route-learn=true")
        servers.start_ovn_ic()
        code, err = _sh(work, servers, script)
        work.check(code == 0, f"configure-ovn-ic.sh exits {code}: {err.strip()[-300:]}")
        options = servers.ctl("ovn-nbctl", "get", "NB_Global", ".", "options")
        for option in ("ic-route-adv", "ic-route-learn"):
            work.check(option in options, f"configure-ovn-ic.sh removed the operator's {option}: {options.strip()}")
        code, err = _sh(work, servers, script)
        work.check(code == 0, f"the second run of configure-ovn-ic.sh exits {code}: {err.strip()[-300:]}")


def _ic_refused(ctx: Context, work: Workdir) -> None:
    """An operator's router port of the name the script uses; SB and IC SB hold no rows yet."""
    out = _rendered(ctx, work, _openstack(ctx))
    assert out is not None
    script = _script(out, "configure-ovn-ic.sh", "ctl1")
    with Servers(work) as servers:
        _ic_setup(servers, init=False)
        servers.ctl("ovn-nbctl", "init")
        servers.ctl("ovn-nbctl", "lr-add", "operators-router")
        servers.ctl("ovn-nbctl", "lrp-add", "operators-router", "openstack-ts", "00:00:00:00:99:01",
                    "169.254.100.99/24")
        before = servers.dumps()
        code, _err = _sh(work, servers, script)
        work.check(code == 1, f"configure-ovn-ic.sh with an operator's port openstack-ts exits {code}, not 1")
        touched = changed(servers, before, servers.dumps())
        work.check(not touched, f"a refused run changed {'; '.join(touched)}")


# --- configure-ovn-host.sh -------------------------------------------------------------------------

def _host_twice(ctx: Context, work: Workdir) -> None:
    out = _rendered(ctx, work, _cloudstack(ctx))
    assert out is not None
    script = _script(out, "configure-ovn-host.sh", "kvm01")
    with Servers(work) as servers:
        servers.start("ovs")
        servers.ctl("ovs-vsctl", "--no-wait", "init")
        env = servers.env() | {"OVN_ENCAP_IP": "10.250.0.21"}
        first_run = work.run(["sh", script], env=env, timeout=120)
        if not work.check(first_run.code == 0, f"configure-ovn-host.sh exits {first_run.code}: {first_run.err[-300:]}"):
            return
        first = servers.dump("ovs")
        again = work.run(["sh", script], env=env, timeout=120)
        work.check(again.code == 0, f"the second run exits {again.code}: {again.err[-300:]}")
        work.check(servers.dump("ovs") == first, "the second run of configure-ovn-host.sh changed Open_vSwitch")
