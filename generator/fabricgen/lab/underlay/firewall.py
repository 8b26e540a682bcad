"""The rendered nft files, loaded into their host's namespace with the real `nft -f`, and the rule
that drops a flow, named by the kernel: a table of the lab's own marks the flow for tracing
(`meta nftrace set 1`), `nft monitor trace` reports the verdict of each rule it meets, and the
flow is sent once more."""

from __future__ import annotations

import re
import select
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from fabricgen.lab.underlay.namespaces import run_in
from fabricgen.lab.underlay.needs import Need

TRACE_TABLE = "fabricgen_lab_trace"
TRACE_SECONDS = 2.0  # a flow no rule drops is waited for this long
_DROP = re.compile(r"^trace id \S+ (\S+ \S+) (\S+) rule (.+?) \(verdict (drop|reject)\)", re.MULTILINE)
_POLICY_DROP = re.compile(r"^trace id \S+ (\S+ \S+) (\S+) policy drop", re.MULTILINE)


def load(namespace: str, text: str, directory: Path, name: str) -> str | None:
    """What `nft -f` said when it refused the file, or None."""
    path = directory / name
    path.write_text(text)
    done = run_in(namespace, ["nft", "-f", str(path)])
    return None if done.returncode == 0 else (done.stderr.strip() or f"nft exited {done.returncode}")


def _trace_rules(need: Need) -> str:
    source = f" ip saddr {need.source_address}" if need.source_address is not None else ""
    return (f"table inet {TRACE_TABLE} {{\n chain pre {{\n  type filter hook prerouting priority -350; policy accept;\n"
            f"  ip daddr {need.address}{source} {need.protocol} dport {need.port} meta nftrace set 1\n }}\n}}\n")


def dropped_by(namespace: str, need: Need, send: Callable[[], None], directory: Path) -> str | None:
    """The table and rule of `namespace` that drop `need`, as the kernel's trace names them, or
    None when no rule there drops it (the flow is lost on the way, or arrives)."""
    rules = directory / f"{namespace}-trace.nft"
    rules.write_text(_trace_rules(need))
    if run_in(namespace, ["nft", "-f", str(rules)]).returncode != 0:
        return None
    monitor = subprocess.Popen(["ip", "netns", "exec", namespace, "nft", "monitor", "trace"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = ""
    try:
        assert monitor.stdout is not None
        deadline = time.monotonic() + TRACE_SECONDS
        while time.monotonic() < deadline and not (_DROP.search(out) or _POLICY_DROP.search(out)):
            send()  # again until the monitor, which subscribes at its own pace, reports it
            while select.select([monitor.stdout], [], [], 0.25)[0]:
                line = monitor.stdout.readline()
                if not line:
                    break
                out += line
    finally:
        monitor.terminate()
        rest, _ = monitor.communicate(timeout=5)
        out += rest
        run_in(namespace, ["nft", "delete", "table", "inet", TRACE_TABLE])
    if (match := _DROP.search(out)) is not None:
        return f"table {match.group(1)} chain {match.group(2)} rule `{match.group(3)}`"
    if (match := _POLICY_DROP.search(out)) is not None:
        return f"table {match.group(1)} chain {match.group(2)} policy drop"
    return None
