"""Controller scripts never take over or delete what they do not own, against real OVN 23.03.

Rows are created by hand the way an operator, Neutron or another tool would: without the
`fabricgen-owner` marker, or with another script's. A row of the same name as one the
script manages (a provider network switch or its port, the IC router port or transit
switch port), a route on the IC router to a prefix the fabric routes, or a Connection on
the same target is reported on stderr and the script exits 1 having changed nothing; a
later render without the row's counterpart leaves it as it was. Connection rows of others
(an operator's monitoring listener) survive every run; the SSL row is the script's own
(kept in place, so a second run changes nothing) unless one of others is there, which is
left as it is. A database that does not answer stops the script with its name and address.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from ipaddress import IPv4Address
from pathlib import Path

import pytest
from test_script_pruning import FABRIC, ROUTER, WITHOUT_NETWORKS, controller_script, ctl, edited, rows, sh

from fabricgen.lab.ovn.sandbox import Sandbox, missing_prerequisites
from fabricgen.plan.deployments import OWNER_KEY
from support.ovsdb import OVN_NB, OVN_SB, Database, OvsdbServers, missing

pytestmark = pytest.mark.lab  # starts real programs: ovn-ic, ovn-ic-nbctl, ovn-ic-sbctl, ovn-nbctl, ovn-northd...

OVN_IC_NB = Path("/usr/share/ovn/ovn-ic-nb.ovsschema")
OVN_IC_SB = Path("/usr/share/ovn/ovn-ic-sb.ovsschema")
CENTRAL, IC = "configure-ovn-central.sh", "configure-ovn-ic.sh"


@pytest.fixture
def databases(tmp_path: Path) -> Iterator[OvsdbServers]:
    gone = missing() + [str(s) for s in (OVN_IC_NB, OVN_IC_SB) if not s.exists()]
    if gone:
        pytest.skip(f"not installed: {', '.join(gone)}")
    with OvsdbServers(tmp_path / "db") as servers:
        yield servers


@pytest.fixture
def scripts(tmp_path: Path) -> Path:
    path = tmp_path / "scripts"
    path.mkdir()
    return path


def central_env(nb: Database, sb: Database) -> dict[str, str]:
    return {**os.environ, "OVN_NB_DB": nb.remote, "OVN_SB_DB": sb.remote}


# --- provider networks: a switch and port of the same name --------------------------------


@pytest.mark.parametrize("marker", [None, "central/other"], ids=["unmarked", "other-owner"])
def test_central_script_leaves_an_operators_same_name_switch_alone(
        databases: OvsdbServers, scripts: Path, marker: str | None) -> None:
    nb, sb = databases.start(OVN_NB), databases.start(OVN_SB)
    env = central_env(nb, sb)
    nbctl = lambda *args: ctl("ovn-nbctl", env, *args)  # noqa: E731
    nbctl("init")
    ctl("ovn-sbctl", env, "init")
    # The operator's switch `storage` with a localnet port `storage-external` of their own.
    nbctl("ls-add", "storage", "--", "lsp-add", "storage", "storage-external",
          "--", "lsp-set-type", "storage-external", "localnet", "--", "lsp-set-addresses", "storage-external",
          "unknown", "--", "lsp-set-options", "storage-external", "network_name=storage-net")
    if marker is not None:
        for table, name in (("Logical_Switch", "storage"), ("Logical_Switch_Port", "storage-external")):
            nbctl("set", table, name, f'external_ids:{OWNER_KEY}="{marker}"')
    operators = {"switch": rows(env, "Logical_Switch", "name")[("storage",)],
                 "port": rows(env, "Logical_Switch_Port", "name")[("storage-external",)]}
    dumps = nb.dump(), sb.dump()

    refused = sh(controller_script(FABRIC, CENTRAL, scripts), env)
    assert refused.returncode == 1, refused.stderr
    owner = marker or "none"
    assert f"switch storage exists and is not fabricgen's ({OWNER_KEY}: {owner}); left alone" in refused.stderr
    assert f"port storage-external exists and is not fabricgen's ({OWNER_KEY}: {owner}); left alone" \
        in refused.stderr
    assert "2 row(s) in the way are not fabricgen's; nothing changed" in refused.stderr
    assert (nb.dump(), sb.dump()) == dumps, "a refused run changed a database"

    # A later fabric without the storage network: the operator's rows are untouched.
    later = sh(controller_script(WITHOUT_NETWORKS, CENTRAL, scripts), env)
    assert later.returncode == 0, later.stderr
    assert rows(env, "Logical_Switch", "name")[("storage",)] == operators["switch"]
    assert rows(env, "Logical_Switch_Port", "name")[("storage-external",)] == operators["port"]
    assert nbctl("lsp-get-options", "storage-external") == "network_name=storage-net"
    assert nbctl("get", "Logical_Switch_Port", "storage-external", "tag") == "[]"
    assert rows(env, "Logical_Switch", "name")[("public",)].owner == "central/dc"


# --- Connection rows: only fabricgen's are managed -----------------------------------------


def connections(env: dict[str, str], tool: str) -> dict[str, tuple[str, str]]:
    """Every Connection row of one database: target -> (uuid, fabricgen owner)."""
    out = {}
    for line in ctl(tool, env, "--format=csv", "--data=bare", "--no-headings",
                    "--columns=target,_uuid", "list", "Connection").splitlines():
        target, uuid = line.rsplit(",", 1)
        owner = ctl(tool, env, "--if-exists", "get", "Connection", uuid, f"external_ids:{OWNER_KEY}")
        out[target.strip('"')] = (uuid, owner.strip('"'))
    return out


def test_central_script_keeps_an_operators_listeners(databases: OvsdbServers, scripts: Path, tmp_path: Path) -> None:
    nb, sb = databases.start(OVN_NB), databases.start(OVN_SB)
    env = central_env(nb, sb)
    ctl("ovn-nbctl", env, "init")
    ctl("ovn-sbctl", env, "init")
    # A monitoring socket on the NB and a read-only TCP listener on the SB, added by hand.
    monitor = f"punix:{tmp_path / 'monitor.sock'}"
    ctl("ovn-nbctl", env, "--", "--id=@c", "create", "Connection", f'target="{monitor}"',
        "--", "add", "NB_Global", ".", "connections", "@c")
    ctl("ovn-sbctl", env, "--", "--id=@c", "create", "Connection", 'target="ptcp:16642:127.0.0.1"',
        "read_only=true", "--", "add", "SB_Global", ".", "connections", "@c")
    theirs = {"nb": connections(env, "ovn-nbctl"), "sb": connections(env, "ovn-sbctl")}

    script = controller_script(FABRIC, CENTRAL, scripts)
    first = sh(script, env)
    assert first.returncode == 0, first.stderr
    nb_rows, sb_rows = connections(env, "ovn-nbctl"), connections(env, "ovn-sbctl")
    assert nb_rows[monitor] == theirs["nb"][monitor]
    assert sb_rows["ptcp:16642:127.0.0.1"] == theirs["sb"]["ptcp:16642:127.0.0.1"]
    assert nb_rows["ptcp:6641:10.20.0.11"][1] == sb_rows["ptcp:6642:10.20.0.11"][1] == "central/dc"
    assert len(nb_rows) == len(sb_rows) == 2
    assert ctl("ovn-nbctl", env, "get", "Connection", nb_rows["ptcp:6641:10.20.0.11"][0],
               "inactivity_probe") == "60000"

    dumps = nb.dump(), sb.dump()
    second = sh(script, env)
    assert second.returncode == 0, second.stderr
    assert (nb.dump(), sb.dump()) == dumps, "the second run changed a database"

    # The fabric moves the NB port: fabricgen's row follows, the operator's stays.
    moved = sh(controller_script(edited(FABRIC, ("      clientNetworks: [10.20.0.0/24]\n",
                                                 "      clientNetworks: [10.20.0.0/24]\n      nbPort: 7641\n")),
                                 CENTRAL, scripts), env)
    assert moved.returncode == 0, moved.stderr
    after = connections(env, "ovn-nbctl")
    assert sorted(after) == sorted([monitor, "ptcp:7641:10.20.0.11"])
    assert after[monitor] == theirs["nb"][monitor]
    assert connections(env, "ovn-sbctl") == sb_rows


def test_central_script_refuses_a_listener_of_others_on_its_target(databases: OvsdbServers, scripts: Path) -> None:
    nb, sb = databases.start(OVN_NB), databases.start(OVN_SB)
    env = central_env(nb, sb)
    ctl("ovn-nbctl", env, "init")
    ctl("ovn-sbctl", env, "init")
    ctl("ovn-nbctl", env, "set-connection", "ptcp:6641:10.20.0.11")  # by hand, unmarked
    dumps = nb.dump(), sb.dump()
    refused = sh(controller_script(FABRIC, CENTRAL, scripts), env)
    assert refused.returncode == 1
    assert ("northbound Connection ptcp:6641:10.20.0.11 listens on port 6641, which fabricgen's northbound "
            f"listener ptcp:6641:10.20.0.11 needs, and is not fabricgen's ({OWNER_KEY}: none); left alone"
            in refused.stderr)
    assert (nb.dump(), sb.dump()) == dumps


RAFT = edited(FABRIC, ("        - host: ctl1\n          address: 10.20.0.11\n",
                       "        - host: ctl1\n          address: 10.20.0.11\n        - host: ctl4\n"
                       "          address: 10.20.0.12\n        - host: ctl5\n          address: 10.20.0.13\n"))


# (fabric, database holding the operator's listener, its target, fabricgen's listener it blocks).
# ovsdb-server opens every Connection target with pstream_open (openvswitch/ovs lib/stream.c;
# ptcp:PORT[:IP], pssl:PORT[:IP], the port defaulting to 6640): one that takes a port fabricgen's
# listener needs, on any address, leaves one of the two unbound (EADDRINUSE). The NB and SB
# servers of a controller share its ports, so the SB's listeners count for the NB's port too.
SAME_PORT = [
    ("single", "nb", "pssl:6641", "northbound", "ptcp:6641:10.20.0.11"),
    ("single", "nb", "ptcp:6641", "northbound", "ptcp:6641:10.20.0.11"),
    ("single", "nb", "ptcp:6641:127.0.0.1", "northbound", "ptcp:6641:10.20.0.11"),
    ("single", "nb", "pssl:6641:10.20.0.11", "northbound", "ptcp:6641:10.20.0.11"),
    ("single", "sb", "ptcp:6642:[::]", "southbound", "ptcp:6642:10.20.0.11"),
    ("single", "sb", "ptcp:6641", "northbound", "ptcp:6641:10.20.0.11"),
    ("raft", "nb", "ptcp:6641:10.20.0.11", "northbound", "ptcp:6641"),
    ("raft", "nb", "pssl:6642:10.20.0.12", "southbound", "ptcp:6642"),
]


@pytest.mark.parametrize(("fabric", "where", "target", "blocked", "mine"), SAME_PORT,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in SAME_PORT])
def test_central_script_refuses_a_listener_of_others_on_its_port(
        databases: OvsdbServers, scripts: Path, fabric: str, where: str, target: str, blocked: str,
        mine: str) -> None:
    nb, sb = databases.start(OVN_NB), databases.start(OVN_SB)
    env = central_env(nb, sb)
    tool, description = ("ovn-nbctl", "northbound") if where == "nb" else ("ovn-sbctl", "southbound")
    ctl(tool, env, "init")  # the other database stays new, without its global row
    ctl(tool, env, "set-connection", target)
    dumps = nb.dump(), sb.dump()
    refused = sh(controller_script(RAFT if fabric == "raft" else FABRIC, CENTRAL, scripts), env)
    assert refused.returncode == 1, refused.stderr
    port = mine.split(":")[1]
    assert (f"{description} Connection {target} listens on port {port}, which fabricgen's {blocked} listener "
            f"{mine} needs, and is not fabricgen's ({OWNER_KEY}: none); left alone") in refused.stderr
    assert "1 row(s) in the way are not fabricgen's; nothing changed" in refused.stderr
    assert (nb.dump(), sb.dump()) == dumps, "a refused run changed a database"


# --- SSL: the database's one SSL row -----------------------------------------------------

KEY = "/etc/ovn/key;#\"q'\\$x%.pem"  # every character a quoting mistake would lose
CLIENTS = "      clientNetworks: [10.20.0.0/24]\n"
SSL_FABRIC = edited(FABRIC, (CLIENTS, CLIENTS + "      protocol: ssl\n      ssl:\n"
                             "        privateKey: '" + KEY.replace("'", "''") + "'\n"
                             + "        certificate: /etc/ovn/cert.pem\n        caCertificate: /etc/ovn/ca.pem\n"))


def ssl_rows(env: dict[str, str], tool: str) -> list[dict[str, str]]:
    """The SSL rows of one database: uuid, the three paths, ssl_protocols and the fabricgen owner."""
    columns = "_uuid,private_key,certificate,ca_cert,ssl_protocols,external_ids"
    out = json.loads(ctl(tool, env, "--format=json", f"--columns={columns}", "list", "SSL"))
    return [{"uuid": u[1], "private_key": k, "certificate": c, "ca_cert": ca, "ssl_protocols": proto,
             "owner": dict(ids[1]).get(OWNER_KEY, "")} for u, k, c, ca, proto, ids in out["data"]]


def test_central_script_ssl_is_its_own_row_and_idempotent(databases: OvsdbServers, scripts: Path) -> None:
    nb, sb = databases.start(OVN_NB), databases.start(OVN_SB)
    env = central_env(nb, sb)
    script = controller_script(SSL_FABRIC, CENTRAL, scripts)
    first = sh(script, env)
    assert first.returncode == 0, first.stderr
    for tool in ("ovn-nbctl", "ovn-sbctl"):
        (row,) = ssl_rows(env, tool)
        assert (row["private_key"], row["certificate"], row["ca_cert"], row["owner"]) == (
            KEY, "/etc/ovn/cert.pem", "/etc/ovn/ca.pem", "central/dc")
    dumps = nb.dump(), sb.dump()
    second = sh(script, env)
    assert second.returncode == 0, second.stderr
    assert (nb.dump(), sb.dump()) == dumps, "the second run changed a database"
    # Back to tcp: fabricgen's SSL rows go.
    tcp = sh(controller_script(FABRIC, CENTRAL, scripts), env)
    assert tcp.returncode == 0, tcp.stderr
    assert ssl_rows(env, "ovn-nbctl") == ssl_rows(env, "ovn-sbctl") == []


@pytest.mark.parametrize("same_paths", [True, False], ids=["same-certificates", "other-certificates"])
def test_central_script_leaves_an_operators_ssl_row_alone(databases: OvsdbServers, scripts: Path,
                                                          same_paths: bool) -> None:
    nb, sb = databases.start(OVN_NB), databases.start(OVN_SB)
    env = central_env(nb, sb)
    key = KEY if same_paths else "/etc/ovn/operators.pem"
    for tool, table in (("ovn-nbctl", "NB_Global"), ("ovn-sbctl", "SB_Global")):
        ctl(tool, env, "init")
        ctl(tool, env, "--", "--id=@s", "create", "SSL", f"private_key={json.dumps(key)}",
            'certificate="/etc/ovn/cert.pem"', 'ca_cert="/etc/ovn/ca.pem"', 'ssl_protocols="TLSv1.3"',
            "--", "set", table, ".", "ssl=@s")
    theirs = {tool: ssl_rows(env, tool) for tool in ("ovn-nbctl", "ovn-sbctl")}
    dumps = nb.dump(), sb.dump()
    result = sh(controller_script(SSL_FABRIC, CENTRAL, scripts), env)
    if same_paths:
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode == 1
        assert (f"northbound SSL settings with other certificates exist and are not fabricgen's ({OWNER_KEY}: "
                "none); left alone") in result.stderr
        assert (nb.dump(), sb.dump()) == dumps, "a refused run changed a database"
    assert {tool: ssl_rows(env, tool) for tool in theirs} == theirs


# --- configure-ovn-ic.sh: router port, transit switch port, routes -------------------------

_MISSING = missing_prerequisites()
needs_ovn_ic = pytest.mark.skipif(bool(_MISSING), reason=f"real OVN-IC needed; missing: {', '.join(_MISSING)}")
SHRUNK_ROUTES = edited(FABRIC, ("""  - name: branch
    platform: kube-ovn
    gatewayNodes: [branch-gw1]
    transitAddress: 169.254.100.24
    backbone:
      cidr: 172.30.20.0/24
""", ""))
DC_JOIN = "    interconnect:\n      transitAddress: 169.254.100.200\n"
PLATFORM_ROUTER = (DC_JOIN, DC_JOIN + "      createRouter: false\n")  # the router is the platform's


def ic_env(sandbox: Sandbox) -> dict[str, str]:
    return {**sandbox.env(), "OVN_NB_DB": sandbox.nb_db("dc"), "OVN_SB_DB": sandbox.sb_db("dc"),
            "OVN_IC_NB_DB": sandbox.ic_nb, "OVN_IC_SB_DB": sandbox.ic_sb}


def nb_dump(sandbox: Sandbox) -> str:
    return ctl("ovsdb-client", sandbox.env(), "dump", sandbox.nb_db("dc"), "OVN_Northbound")


@needs_ovn_ic
@pytest.mark.parametrize("hop", ["169.254.100.24", "169.254.100.77"], ids=["same-next-hop", "other-next-hop"])
def test_ic_script_leaves_an_operators_route_alone(scripts: Path, hop: str) -> None:
    with Sandbox.running([]) as sandbox:
        sandbox.start_az("dc")
        sandbox.add_gateway_chassis("dc", "gw1", IPv4Address("127.0.0.20"))
        env = ic_env(sandbox)
        # The platform's router with the operator's route to the branch backbone, which the
        # fabric also routes.
        sandbox.nb("dc", "lr-add", ROUTER)
        sandbox.nb("dc", "lr-route-add", ROUTER, "172.30.20.0/24", hop)
        theirs = rows(env, "Logical_Router_Static_Route", "ip_prefix", "nexthop")[("172.30.20.0/24", hop)]
        before = nb_dump(sandbox)

        refused = sh(controller_script(edited(FABRIC, PLATFORM_ROUTER), IC, scripts), env)
        assert refused.returncode == 1, refused.stderr + refused.stdout
        assert (f"route 172.30.20.0/24 via {hop} on router {ROUTER} exists and is not fabricgen's "
                f"({OWNER_KEY}: none); left alone, and fabricgen's route 172.30.20.0/24 via 169.254.100.24 "
                "is not added") in refused.stderr
        assert nb_dump(sandbox) == before, "a refused run changed the database"

        # Without the branch zone the script runs, and the operator's route is the same row.
        later = sh(controller_script(edited(SHRUNK_ROUTES, PLATFORM_ROUTER), IC, scripts), env)
        assert later.returncode == 0, later.stderr + later.stdout
        after = rows(env, "Logical_Router_Static_Route", "ip_prefix", "nexthop")
        assert after[("172.30.20.0/24", hop)] == theirs
        assert after[("172.30.10.0/24", "169.254.100.23")].owner == "ic/dc"


@needs_ovn_ic
@pytest.mark.parametrize("which", ["router-port", "switch-port"])
def test_ic_script_leaves_an_operators_transit_ports_alone(scripts: Path, which: str) -> None:
    with Sandbox.running([]) as sandbox:
        sandbox.start_az("dc", az_name="dc")  # registered, so ovn-ic copies the transit switch
        sandbox.add_gateway_chassis("dc", "gw1", IPv4Address("127.0.0.20"))
        env = ic_env(sandbox)
        sandbox.nb("dc", "lr-add", "operators-router")
        if which == "router-port":
            sandbox.nb("dc", "lrp-add", "operators-router", "dc-ts", "00:00:00:00:99:01", "169.254.100.99/24")
            table, name, what = "Logical_Router_Port", "dc-ts", "router port dc-ts"
        else:
            sandbox.nb("dc", "wait-until", "Logical_Switch", "ts")
            sandbox.nb("dc", "lsp-add", "ts", "ts-dc", "--", "lsp-set-addresses", "ts-dc", "00:00:00:00:99:02")
            table, name, what = "Logical_Switch_Port", "ts-dc", "switch port ts-dc"
        theirs = rows(env, table, "name")[(name,)]
        before = nb_dump(sandbox)

        refused = sh(controller_script(FABRIC, IC, scripts), env)
        assert refused.returncode == 1, refused.stderr + refused.stdout
        assert f"{what} exists and is not fabricgen's ({OWNER_KEY}: none); left alone" in refused.stderr
        assert nb_dump(sandbox) == before, "a refused run changed the database"
        assert rows(env, table, "name")[(name,)] == theirs


@needs_ovn_ic
@pytest.mark.parametrize("marker", [None, "ic/other"], ids=["unmarked", "other-owner"])
def test_ic_script_refuses_a_same_name_router_it_did_not_create(scripts: Path, marker: str | None) -> None:
    """createRouter: true means the router is fabricgen's: one of the same name that the script
    did not create (or another script's) is reported and nothing is changed."""
    with Sandbox.running([]) as sandbox:
        sandbox.start_az("dc", az_name="dc")
        sandbox.add_gateway_chassis("dc", "gw1", IPv4Address("127.0.0.20"))
        env = ic_env(sandbox)
        sandbox.nb("dc", "lr-add", ROUTER)
        if marker is not None:
            sandbox.nb("dc", "set", "Logical_Router", ROUTER, f'external_ids:{OWNER_KEY}="{marker}"')
        theirs = rows(env, "Logical_Router", "name")[(ROUTER,)]
        before = nb_dump(sandbox)

        refused = sh(controller_script(FABRIC, IC, scripts), env)
        assert refused.returncode == 1, refused.stderr + refused.stdout
        assert (f"router {ROUTER} exists and is not fabricgen's ({OWNER_KEY}: {marker or 'none'}); left alone"
                in refused.stderr)
        assert "1 row(s) in the way are not fabricgen's; nothing changed" in refused.stderr
        assert nb_dump(sandbox) == before, "a refused run changed the database"
        assert rows(env, "Logical_Router", "name")[(ROUTER,)] == theirs
        assert rows(env, "Logical_Router_Port", "name") == {}


@needs_ovn_ic
def test_ic_script_marks_the_router_it_creates_and_uses_a_platform_router_unmarked(scripts: Path) -> None:
    with Sandbox.running([]) as sandbox:
        sandbox.start_az("dc", az_name="dc")
        sandbox.add_gateway_chassis("dc", "gw1", IPv4Address("127.0.0.20"))
        env = ic_env(sandbox)
        first = sh(controller_script(FABRIC, IC, scripts), env)
        assert first.returncode == 0, first.stderr + first.stdout
        created = rows(env, "Logical_Router", "name")[(ROUTER,)]
        assert created.owner == "ic/dc"
        again = sh(controller_script(FABRIC, IC, scripts), env)
        assert again.returncode == 0, again.stderr + again.stdout
        assert rows(env, "Logical_Router", "name")[(ROUTER,)] == created

    with Sandbox.running([]) as sandbox:  # createRouter: false: the platform's router stays unmarked
        sandbox.start_az("dc", az_name="dc")
        sandbox.add_gateway_chassis("dc", "gw1", IPv4Address("127.0.0.20"))
        env = ic_env(sandbox)
        platform = edited(FABRIC, PLATFORM_ROUTER)
        missing_router = sh(controller_script(platform, IC, scripts), env)
        assert missing_router.returncode == 1
        assert f"router {ROUTER} does not exist; its platform creates it (createRouter: false)" \
            in missing_router.stderr
        sandbox.nb("dc", "lr-add", ROUTER)
        theirs = rows(env, "Logical_Router", "name")[(ROUTER,)]
        joined = sh(controller_script(platform, IC, scripts), env)
        assert joined.returncode == 0, joined.stderr + joined.stdout
        assert rows(env, "Logical_Router", "name")[(ROUTER,)] == theirs
        assert theirs.owner == ""
        assert rows(env, "Logical_Router_Port", "name")[("dc-ts",)].owner == "ic/dc"


# --- configure-ovn-ic.sh: NB_Global name and route-exchange options ---------------------------

AUTO_ROUTE = edited(FABRIC, ("interconnection:\n", "interconnection:\n  autoRoute: true\n"),
                    ("    transitAddress: 169.254.100.24\n",  # learned routes need distinct pod CIDRs (FG303)
                     "    transitAddress: 169.254.100.24\n    cluster: {podCIDR: 10.56.0.0/16}\n"))
ROUTE_OPTIONS = ("ic-route-adv", "ic-route-learn")


def nb_global(env: dict[str, str], column: str) -> dict[str, str]:
    """One map column of NB_Global (options, external_ids)."""
    out = json.loads(ctl("ovn-nbctl", env, "--format=json", f"--columns={column}", "list", "NB_Global"))
    ((kind, pairs),) = out["data"][0]
    assert kind == "map"
    return dict(pairs)


def marks(env: dict[str, str]) -> dict[str, str]:
    """fabricgen's record, in NB_Global external_ids, of the NB_Global values it set."""
    return {k: v for k, v in nb_global(env, "external_ids").items() if k.startswith(OWNER_KEY)}


def test_ic_script_owns_the_route_options_it_sets(databases: OvsdbServers, scripts: Path) -> None:
    dbs = ic_databases(databases)
    env = ic_script_env(dbs)
    auto = sh(controller_script(AUTO_ROUTE, IC, scripts), env)
    assert auto.returncode == 0, auto.stderr + auto.stdout
    assert {k: nb_global(env, "options").get(k) for k in ROUTE_OPTIONS} == dict.fromkeys(ROUTE_OPTIONS, "true")
    assert marks(env) == {f"{OWNER_KEY}-name": "ic/dc", f"{OWNER_KEY}-option-ic-route-adv": "ic/dc",
                          f"{OWNER_KEY}-option-ic-route-learn": "ic/dc"}
    before = dumps_of(dbs)
    again = sh(controller_script(AUTO_ROUTE, IC, scripts), env)
    assert again.returncode == 0, again.stderr + again.stdout
    assert dumps_of(dbs) == before, "the second run changed a database"

    explicit = sh(controller_script(FABRIC, IC, scripts), env)  # autoRoute off: fabricgen's options go
    assert explicit.returncode == 0, explicit.stderr + explicit.stdout
    assert not set(ROUTE_OPTIONS) & set(nb_global(env, "options"))
    assert marks(env) == {f"{OWNER_KEY}-name": "ic/dc"}


@pytest.mark.parametrize("value", ["true", "false"])
def test_ic_script_leaves_an_operators_route_options_alone(databases: OvsdbServers, scripts: Path,
                                                           value: str) -> None:
    """Without autoRoute the script removes only the options it set; an operator's stay."""
    dbs = ic_databases(databases)
    env = ic_script_env(dbs)
    ctl("ovn-nbctl", env, "set", "NB_Global", ".", *(f"options:{k}={value}" for k in ROUTE_OPTIONS))
    result = sh(controller_script(FABRIC, IC, scripts), env)
    assert result.returncode == 0, result.stderr + result.stdout
    assert {k: nb_global(env, "options").get(k) for k in ROUTE_OPTIONS} == dict.fromkeys(ROUTE_OPTIONS, value)
    assert f"{OWNER_KEY}-option-ic-route-adv" not in marks(env)


def test_ic_script_with_auto_route_keeps_an_operators_option_unmarked(databases: OvsdbServers,
                                                                      scripts: Path) -> None:
    """autoRoute wants both options true: the operator's ic-route-learn=true already is, so it stays
    theirs (unmarked) and survives autoRoute being turned off; ic-route-adv the script sets."""
    dbs = ic_databases(databases)
    env = ic_script_env(dbs)
    ctl("ovn-nbctl", env, "set", "NB_Global", ".", "options:ic-route-learn=true")
    auto = sh(controller_script(AUTO_ROUTE, IC, scripts), env)
    assert auto.returncode == 0, auto.stderr + auto.stdout
    assert marks(env) == {f"{OWNER_KEY}-name": "ic/dc", f"{OWNER_KEY}-option-ic-route-adv": "ic/dc"}
    explicit = sh(controller_script(FABRIC, IC, scripts), env)
    assert explicit.returncode == 0, explicit.stderr + explicit.stdout
    assert nb_global(env, "options").get("ic-route-learn") == "true"
    assert "ic-route-adv" not in nb_global(env, "options")


def test_ic_script_with_auto_route_refuses_an_operators_option_against_it(databases: OvsdbServers,
                                                                          scripts: Path) -> None:
    dbs = ic_databases(databases)
    env = ic_script_env(dbs)
    ctl("ovn-nbctl", env, "set", "NB_Global", ".", "options:ic-route-adv=false")
    before = dumps_of(dbs)
    refused = sh(controller_script(AUTO_ROUTE, IC, scripts), env)
    assert refused.returncode == 1, refused.stderr + refused.stdout
    assert (f"NB_Global options:ic-route-adv=false exists and is not fabricgen's ({OWNER_KEY}: none); left "
            "alone, and autoRoute needs it true") in refused.stderr
    assert dumps_of(dbs) == before, "a refused run changed a database"


def test_ic_script_refuses_an_az_name_it_did_not_set(databases: OvsdbServers, scripts: Path) -> None:
    """NB_Global name is the AZ ovn-ic registers: another name set by hand (or by a platform) is
    not renamed; the same name is used as it is, unmarked; one the script set follows fabric.yaml."""
    dbs = ic_databases(databases)
    env = ic_script_env(dbs)
    ctl("ovn-nbctl", env, "set", "NB_Global", ".", "name=openstack-east")
    before = dumps_of(dbs)
    refused = sh(controller_script(FABRIC, IC, scripts), env)
    assert refused.returncode == 1, refused.stderr + refused.stdout
    assert (f"NB_Global name openstack-east (the AZ ovn-ic registers) exists and is not fabricgen's "
            f"({OWNER_KEY}: none); left alone, and AZ dc is not set") in refused.stderr
    assert dumps_of(dbs) == before, "a refused run changed a database"

    ctl("ovn-nbctl", env, "set", "NB_Global", ".", "name=dc")
    same = sh(controller_script(FABRIC, IC, scripts), env)
    assert same.returncode == 0, same.stderr + same.stdout
    assert f"{OWNER_KEY}-name" not in marks(env)


def dumps_of(dbs: dict[str, Database]) -> dict[str, str]:
    return {name: db.dump() for name, db in dbs.items()}


# --- databases that do not answer -----------------------------------------------------------


def ic_databases(databases: OvsdbServers, *, copied: bool = True) -> dict[str, Database]:
    """NB, SB, IC NB and IC SB servers with what the script needs without ovn-ic running: the
    transit switch in the IC NB and (`copied`) in the NB as ovn-ic copies it, marked
    other_config:interconn-ts (ovn-org/ovn ic/ovn-ic.c, ts_run). The SB and IC SB stay new,
    without their global rows."""
    dbs = {"nb": databases.start(OVN_NB), "sb": databases.start(OVN_SB),
           "ic_nb": databases.start(OVN_IC_NB), "ic_sb": databases.start(OVN_IC_SB)}
    env = ic_script_env(dbs)
    ctl("ovn-ic-nbctl", env, "init")
    ctl("ovn-ic-nbctl", env, "ts-add", "ts")
    ctl("ovn-nbctl", env, "init")
    if copied:
        ctl("ovn-nbctl", env, "ls-add", "ts", "--", "set", "Logical_Switch", "ts", "other_config:interconn-ts=ts")
    return dbs


def ic_script_env(dbs: dict[str, Database]) -> dict[str, str]:
    return {**os.environ, "OVN_NB_DB": dbs["nb"].remote, "OVN_SB_DB": dbs["sb"].remote,
            "OVN_IC_NB_DB": dbs["ic_nb"].remote, "OVN_IC_SB_DB": dbs["ic_sb"].remote}


@pytest.mark.parametrize(("down", "name"), [("sb", "southbound"), ("ic_nb", "IC northbound"),
                                            ("ic_sb", "IC southbound"), ("nb", "northbound")])
def test_ic_script_names_the_database_that_does_not_answer(databases: OvsdbServers, scripts: Path,
                                                           down: str, name: str) -> None:
    dbs = ic_databases(databases)
    env = ic_script_env(dbs)
    dbs[down].stop()
    result = sh(controller_script(FABRIC, IC, scripts), env)
    assert result.returncode == 1, result.stderr + result.stdout
    assert f": the {name} database at {dbs[down].remote} does not answer: " in result.stderr
    assert "transit switch" not in result.stderr
    for other, database in dbs.items():
        if other != down:
            assert f"{database.remote}" not in result.stderr


@pytest.mark.parametrize(("down", "name"), [("nb", "northbound"), ("sb", "southbound")])
def test_central_script_names_the_database_that_does_not_answer(databases: OvsdbServers, scripts: Path,
                                                                down: str, name: str) -> None:
    dbs = {"nb": databases.start(OVN_NB), "sb": databases.start(OVN_SB)}
    env = central_env(dbs["nb"], dbs["sb"])
    dbs[down].stop()
    result = sh(controller_script(FABRIC, CENTRAL, scripts), env)
    assert result.returncode == 1, result.stderr + result.stdout
    assert f": the {name} database at {dbs[down].remote} does not answer: " in result.stderr
