"""A real Neutron (28.0.1, in .neutron: `scripts/setup.sh --test`) for the tests: its API with the
ML2/OVN mechanism driver writing into a lab's OVN NB and SB, and the rendered security-group
playbooks run against it with the real `ansible-playbook` (openstack.cloud 2.5.0).

The configuration is what a Neutron API node with the OVN driver needs, as devstack's
`lib/neutron_plugins/ovn_agent` writes it, less what no cloud here has: `auth_strategy = noauth`
(no Keystone: every request is the project `fake_project_id`, as Neutron's `NoauthFakeProjectId`
middleware makes it), `transport_url = fake:/` (no message queue: no agent listens), and `neutron_sync_mode = off` (the
lab's NB holds rows that are not Neutron's). Its database is Debian's MariaDB, started for the
test with a data directory of its own and reached on a unix socket only (`mariadb`): Neutron's
server supports MySQL/MariaDB and PostgreSQL, not sqlite (on sqlite, about one run in sixteen of
these tests had a port creation answered with 500). openstacksdk reaches it
as a cloud with `auth_type: none` and the network endpoint given.
"""

from __future__ import annotations

import configparser
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from support.fabrics import REPO

PYTHON = REPO / ".neutron" / "bin" / "python"
SERVER = Path(__file__).with_name("neutron_server.py")
ANSIBLE_PLAYBOOK = Path(sys.executable).with_name("ansible-playbook")
MARIADB_INSTALL_DB, MARIADBD, MARIADB = "mariadb-install-db", "/usr/sbin/mariadbd", "mariadb"
START_SECONDS = 120  # Neutron loads its extensions in a few seconds; a slow machine gets more
PROJECT = "fake_project_id"  # noauth's project
RECAP = re.compile(r"^localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)

needs_neutron = pytest.mark.skipif(not PYTHON.exists() or not ANSIBLE_PLAYBOOK.exists() or not Path(MARIADBD).exists(),
                                   reason="Neutron (.neutron), ansible-playbook or MariaDB missing "
                                          "(scripts/setup.sh --test installs them)")


def configuration(directory: Path, nb: str, sb: str, database: str) -> configparser.ConfigParser:
    conf = configparser.ConfigParser(interpolation=None)
    conf.read_dict({
        "DEFAULT": {"core_plugin": "ml2", "service_plugins": "", "auth_strategy": "noauth",
                    "transport_url": "fake:/", "rpc_workers": "0", "rpc_state_report_workers": "0",
                    "api_workers": "1", "state_path": str(directory / "state"),
                    "api_paste_config": str(PYTHON.parent.parent / "etc" / "neutron" / "api-paste.ini"),
                    "log_file": str(directory / "neutron.log")},
        "database": {"connection": database},
        "oslo_concurrency": {"lock_path": str(directory / "lock")},
        "ml2": {"mechanism_drivers": "ovn", "type_drivers": "geneve,flat", "tenant_network_types": "geneve",
                "extension_drivers": "port_security"},
        # OVN's Geneve header with its option (devstack's and the OVN driver's own requirement)
        "ml2_type_geneve": {"vni_ranges": "1:65536", "max_header_size": "38"},
        "ovn": {"ovn_nb_connection": nb, "ovn_sb_connection": sb, "neutron_sync_mode": "off"},
    })
    return conf


@dataclass
class Neutron:
    url: str
    directory: Path
    process: subprocess.Popen[str]

    # ------------------------------------------------------------------ the API
    def call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.url}/v2.0/{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as exc:
            errors = [line for line in self.log().splitlines() if " ERROR " in line or " TRACE " in line]
            raise AssertionError(f"Neutron answered {method} {path} with {exc.code}: {exc.read().decode()}\n"
                                 + "\n".join(errors[-60:])) from None
        return json.loads(text) if text else None

    def log(self) -> str:
        path = self.directory / "neutron.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def security_groups(self) -> dict[str, str]:
        """Name -> id of the project's security groups."""
        return {g["name"]: g["id"] for g in self.call("GET", "security-groups")["security_groups"]}

    def delete_groups(self, prefix: str) -> None:
        for name, ident in self.security_groups().items():
            if name.startswith(prefix):
                self.call("DELETE", f"security-groups/{ident}")

    # ------------------------------------------------------------------ the playbook
    def clouds(self, cloud: str) -> Path:
        path = self.directory / "clouds.yaml"
        with path.open("w") as f:
            YAML().dump({"clouds": {cloud: {"auth_type": "none", "auth": {"endpoint": self.url},
                                            "network_endpoint_override": self.url}}}, f)
        return path

    def play(self, playbook: Path, cloud: str) -> tuple[dict[str, int], str]:
        """`ansible-playbook PLAYBOOK` against this Neutron; its recap (ok, changed, failed) and output."""
        env = {**os.environ, "OS_CLIENT_CONFIG_FILE": str(self.clouds(cloud)),
               "ANSIBLE_LOCALHOST_WARNING": "false", "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
               "ANSIBLE_HOME": str(self.directory / "ansible"), "ANSIBLE_LOCAL_TEMP": str(self.directory / "tmp"),
               "ANSIBLE_NOCOLOR": "true"}
        result = subprocess.run([str(ANSIBLE_PLAYBOOK), "-e", f"ansible_python_interpreter={PYTHON}", str(playbook)],
                                capture_output=True, text=True, env=env, check=False, timeout=600)
        found = RECAP.search(result.stdout)
        assert found is not None, f"no recap from ansible-playbook:\n{result.stdout}\n{result.stderr}"
        ok, changed, unreachable, failed = (int(n) for n in found.groups())
        return {"ok": ok, "changed": changed, "unreachable": unreachable, "failed": failed}, result.stdout


@contextlib.contextmanager
def running(directory: Path, nb: str, sb: str) -> Iterator[Neutron]:
    """Neutron's API against the OVN NB and SB at `nb` and `sb` (OVSDB remotes), stopped on exit."""
    directory.mkdir(parents=True, exist_ok=True)
    with mariadb(directory / "db") as database, _server(directory, nb, sb, database) as api:
        yield api


@contextlib.contextmanager
def mariadb(directory: Path) -> Iterator[str]:
    """Debian's MariaDB with a data directory of its own and a database `neutron`, on a unix socket
    (no TCP); yields the SQLAlchemy URL Neutron connects with (PyMySQL), stops it on exit."""
    data, socket = directory / "data", directory / "mysqld.sock"
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run([MARIADB_INSTALL_DB, "--no-defaults", f"--datadir={data}", "--user=root",
                    "--auth-root-authentication-method=normal", "--skip-test-db"], check=True, capture_output=True)
    process = subprocess.Popen([MARIADBD, "--no-defaults", f"--datadir={data}", f"--socket={socket}",
                                "--skip-networking", "--user=root", f"--pid-file={directory / 'mysqld.pid'}",
                                f"--log-error={directory / 'mysqld.err'}"], start_new_session=True)
    try:
        deadline = time.monotonic() + START_SECONDS
        while subprocess.run([MARIADB, "--no-defaults", f"--socket={socket}", "-u", "root", "-e",
                              "CREATE DATABASE IF NOT EXISTS neutron"], capture_output=True).returncode != 0:
            if process.poll() is not None or time.monotonic() > deadline:
                err = directory / "mysqld.err"
                raise AssertionError(f"MariaDB did not start:\n{err.read_text() if err.exists() else ''}")
            time.sleep(0.1)
        yield f"mysql+pymysql://root@localhost/neutron?unix_socket={socket}"
    finally:
        _stop(process)


def _stop(process: subprocess.Popen[Any], sig: int = signal.SIGTERM) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextlib.contextmanager
def _server(directory: Path, nb: str, sb: str, database: str) -> Iterator[Neutron]:
    with (directory / "neutron.conf").open("w") as f:
        configuration(directory, nb, sb, database).write(f)
    # ovsdbapp reads the schema with ovsdb-client: the system's, on PATH. The server's own output
    # (its port, and what it says before its log file is open) goes to a file: a pipe nobody reads
    # would fill and stop it.
    out = directory / "server.out"
    with out.open("w") as sink:
        process = subprocess.Popen([str(PYTHON), str(SERVER), str(directory)], stdout=sink,
                                   stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        url = _wait_for_port(process, out)
        yield Neutron(url, directory, process)
    finally:
        # the API's state goes with the lab; its server does not stop on SIGTERM within 30 s
        _stop(process, signal.SIGKILL)


def _wait_for_port(process: subprocess.Popen[str], out: Path) -> str:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        found = re.search(r"^serving (\d+)$", out.read_text(errors="replace"), re.M)
        if found:
            return f"http://127.0.0.1:{found.group(1)}"
        if process.poll() is not None:
            break
        time.sleep(0.1)
    raise AssertionError(f"Neutron did not serve (exit {process.poll()}):\n{out.read_text(errors='replace')[-4000:]}")
