"""fabricgen's exit codes, as docs/diagnostics.md and `fabricgen --help` list them (0 is success)."""

from __future__ import annotations

INVALID = 1  # invalid fabric (every problem reported, nothing written), or unusable output path
USAGE = 2  # usage error: arguments (argparse), plugin settings, functionConfig, zone choice
# render (or schema -o) changed files, --check found them stale, diff found changes, transit found stale addresses
CHANGED = 3
INTERNAL = 4  # a bug in fabricgen
UNREACHABLE = 5  # verify: a pair of AZs does not deliver in the OVN lab, or nothing was proven
NO_LAB = 6  # verify: the OVN programs are missing, or the OVN lab cannot run or settle here
UNHEALTHY = 7  # status: the control plane is unhealthy (raft, tunnel keys, vxlan_mode, ...)
NOT_READ = 8  # status: part of the live fabric could not be read, or what was read cannot be judged safely (unknown)
INTERRUPTED = 130
BROKEN_PIPE = 141  # the reader of stdout went away (128 + SIGPIPE, as a shell reports a process SIGPIPE ended)
