"""The read-only commands `fabricgen status` runs, as argument vectors (never a shell line).

Through kubectl they run inside the pods as `kubectl ko` runs them (kubeovn/kube-ovn
`dist/images/kubectl-ko`: `kubectl exec POD -n kube-system -c ovn-central -- ovn-nbctl ...`;
the IC database's in fabricgen's `ovn-ic-server` pods, container `ovn-ic-server`), the tools
finding their local database sockets themselves; directly they name the remote (`--db=`). Every
database read passes `--no-leader-only`, so a raft follower answers too, and a timeout, so a
database that does not answer is reported instead of waited for. Raft status comes from
each member's control socket (`ovn-appctl -t CTL cluster/status DB`, Kube-OVN's socket paths
in its pods) or, without one, from the member's `_Server` database (`raft_health`).
"""

from __future__ import annotations

from collections.abc import Sequence

from fabricgen.observe.raft_server_db import server_databases_argv
from fabricgen.observe.sources import Database, Direct, Kubectl, Ssl

TIMEOUT = 20  # seconds a database (or kubectl's request) may take before the read is given up
OVN_CENTRAL = "ovn-central"
IC_SERVER = "ovn-ic-server"
# Kube-OVN's control sockets and database names (dist/images/kubectl-ko, ovn-healthcheck.sh).
ZONE_CTL: dict[Database, tuple[str, str]] = {
    "northbound": ("/var/run/ovn/ovnnb_db.ctl", "OVN_Northbound"),
    "southbound": ("/var/run/ovn/ovnsb_db.ctl", "OVN_Southbound"),
}
IC_CTL: dict[Database, tuple[str, str]] = {
    "northbound": ("/var/run/ovn/ovn_ic_nb_db.ctl", "OVN_IC_Northbound"),
    "southbound": ("/var/run/ovn/ovn_ic_sb_db.ctl", "OVN_IC_Southbound"),
}
TOOLS = {("zone", "northbound"): "ovn-nbctl", ("zone", "southbound"): "ovn-sbctl",
         ("ic", "northbound"): "ovn-ic-nbctl", ("ic", "southbound"): "ovn-ic-sbctl"}


def kubectl(access: Kubectl, *args: str) -> list[str]:
    return ["kubectl", "--context", access.context, f"--request-timeout={TIMEOUT}s", "-n", access.namespace, *args]


def in_pod(access: Kubectl, pod: str, container: str, argv: Sequence[str]) -> list[str]:
    return kubectl(access, "exec", pod, "-c", container, "--", *argv)


def pods(access: Kubectl, app: str) -> list[str]:
    """The pods of `app=APP` (ovn-central, ovn-ic-server), with their labels and readiness."""
    return kubectl(access, "get", "pods", "-l", f"app={app}", "-o", "json")


def every(access: Kubectl, resource: str) -> list[str]:
    """`kubectl get -A -o json RESOURCE`: every object of a kind, in every namespace."""
    return ["kubectl", "--context", access.context, f"--request-timeout={TIMEOUT}s", "get", "--all-namespaces",
            "-o", "json", resource]


def in_namespace(access: Kubectl, namespace: str, resource: str) -> list[str]:
    """`kubectl get -o json RESOURCE` in one namespace: every object of a kind there."""
    return ["kubectl", "--context", access.context, f"--request-timeout={TIMEOUT}s", "-n", namespace, "get", "-o",
            "json", resource]


def objects(access: Kubectl, namespace: str, resources: Sequence[str]) -> list[str]:
    """`kubectl get -o json` of named objects (`TYPE/NAME`) in one namespace (cluster-scoped
    kinds ignore it); those that do not exist are simply not printed."""
    return ["kubectl", "--context", access.context, f"--request-timeout={TIMEOUT}s", "-n", namespace,
            "get", "--ignore-not-found", "-o", "json", *resources]


def database(scope: str, db: Database, access: Kubectl | Direct, pod: str | None, ssl: Ssl | None,
             args: Sequence[str]) -> list[str]:
    """A read of a database: `scope` `zone` (an AZ's NB/SB) or `ic` (the IC NB/SB)."""
    tool = TOOLS[(scope, db)]
    reads = [tool, f"--timeout={TIMEOUT}", "--no-leader-only", *args]
    if isinstance(access, Kubectl):
        assert pod is not None
        return in_pod(access, pod, OVN_CENTRAL if scope == "zone" else IC_SERVER, reads)
    remote = access.northbound if db == "northbound" else access.southbound
    tls = ssl.options() if ssl is not None and "ssl:" in remote else []
    return [tool, f"--db={remote}", *tls, *reads[1:]]


def table(scope: str, db: Database, access: Kubectl | Direct, pod: str | None, ssl: Ssl | None, name: str,
          columns: Sequence[str] = ()) -> list[str]:
    """Every row of a table as JSON (`ovsdb_rows`)."""
    chosen = [f"--columns={','.join(columns)}"] if columns else []
    return database(scope, db, access, pod, ssl, ["--format=json", *chosen, "list", name])


def cluster_status(control: str, name: str, pod: tuple[Kubectl, str, str] | None = None) -> list[str]:
    """A raft member's `cluster/status`: through its control socket on this machine, or in its pod."""
    argv = ["ovn-appctl", "-t", control, f"--timeout={TIMEOUT}", "cluster/status", name]
    if pod is not None:
        return in_pod(pod[0], pod[1], pod[2], argv)
    return argv


def server_rows_argv(remote: str, database: str, ssl: Ssl | None) -> list[str]:
    """`raft_server_db.server_databases_argv` for a member's remote, with the client certificate for `ssl:`."""
    argv = server_databases_argv(remote, timeout=TIMEOUT)
    if ssl is not None and remote.startswith("ssl:"):
        argv[1:1] = ssl.options()
    return argv
