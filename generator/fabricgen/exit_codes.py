"""fabricgen's exit codes and what each means: the one definition that `fabricgen --help` (each
command's epilogue, `short`) and docs/diagnostics.md (`fabricgen rules --markdown`, `long`) write."""

from __future__ import annotations

from dataclasses import dataclass

SUCCESS = 0
INVALID = 1  # invalid fabric (every problem reported, nothing written), or unusable output path
USAGE = 2  # usage error: arguments (argparse), plugin settings, functionConfig, zone choice
CHANGED = 3  # something changed or differs (render, --check, schema -o, diff, transit, import, status drift)
INTERNAL = 4  # a bug in fabricgen
UNREACHABLE = 5  # verify: a pair of AZs does not deliver in the OVN lab, or nothing was proven
NO_LAB = 6  # verify: the OVN programs are missing, or the OVN lab cannot run or settle here
UNHEALTHY = 7  # status: the control plane is unhealthy (raft, tunnel keys, vxlan_mode, ...)
NOT_READ = 8  # status: part of the live fabric could not be read, or what was read cannot be judged safely (unknown)
INTERRUPTED = 130
BROKEN_PIPE = 141  # the reader of stdout went away (128 + SIGPIPE, as a shell reports a process SIGPIPE ended)


@dataclass(frozen=True)
class Meaning:
    codes: str  # "3", or "129, 143"
    short: tuple[str, ...]  # `--help`'s lines; none: not listed there
    long: str  # docs/diagnostics.md's row


MEANINGS: tuple[Meaning, ...] = (
    Meaning("0",
            ("success; output up to date (import: written, valid, the round trip exact)",),
            "success; output up to date; `import` wrote a valid fabric whose round trip is exact; `status`: every "
            "check is ok"),
    Meaning("1",
            ("invalid fabric (every problem reported, nothing written) or unusable output path;",
             "import: the input was refused (nothing written), or the new fabric has errors (written)"),
            "invalid fabric (every problem reported, nothing written), or the output cannot be written: `render -o` "
            "refused a directory holding a fabric or a tracked file fabricgen did not write, `init` found a file it "
            "would replace, `graph --format svg` found no Graphviz `dot`; `transit` refused the capture, or "
            "`--write` refused to write the fabric (see `transit`); `import`: the input was refused or the file "
            "exists (nothing written), or the imported fabric has errors (written, each located in it)"),
    Meaning("2",
            ("usage error",),
            "usage error: arguments, an unknown `diff --base` revision, `render --all` outside the top of a git "
            "repository, `init --site` not a DNS-1123 label, the Argo CD plugin's settings (a conflict, an unknown "
            "variable, a missing or unknown zone, `FABRIC` outside the repository), the KRM function's "
            "`FabricGenerator`"),
    Meaning("3",
            ("render changed files, --check found the output out of date, schema -o changed the",
             "file, diff found changes, transit found stale transit addresses, import's round",
             "trip is not exact, or status found drift"),
            "`render` changed files, or `--check` found the output out of date (pre-commit fails the commit until "
            "the new output is staged); `schema -o` or `rules -o` changed the file; `diff` found changes; `transit` "
            "found stale transit addresses; `import` wrote a valid fabric whose round trip is not exact; `status` "
            "found drift"),
    Meaning("4",
            ("internal error (a bug: please report it; FABRICGEN_DEBUG=1 shows the traceback)",),
            "internal error: a bug; `FABRICGEN_DEBUG=1` shows the traceback"),
    Meaning("5",
            ("verify: a pair of AZs is not delivered in the OVN lab (where the policy does not deny it), a",
             "policy flow is not as the policy says, OVN refuses a rendered match, or nothing was proven"),
            "`verify`: a pair of AZs is not delivered in the OVN lab (where the policy does not deny it), a policy "
            "flow is not as the policy says, OVN's own parser refuses a rendered match (an ACL or a policy route "
            "ovn-northd would skip), or nothing was proven where something exists to prove (no pair of AZs, yet a "
            "shared OVN deployment or several zones)"),
    Meaning("6",
            ("verify: the OVN programs are missing (the message names the install command), or the lab "
             "cannot run or settle",),
            "`verify`: the OVN programs are missing (the message names the install command), or the lab cannot run, "
            "or its data plane could not settle (packets still on their way when the lab gave up waiting: never "
            "called lost)"),
    Meaning("7",
            ("status: the control plane is unhealthy (raft, transit switch keys, vxlan_mode)",),
            "`status`: the control plane is unhealthy (raft, transit switch keys, `vxlan_mode`)"),
    Meaning("8",
            ("status: part of the live fabric could not be read, or not judged safely (unknown)",),
            "`status`: part of the live fabric could not be read, or what was read does not settle a verdict whose "
            "fix could do harm (`unknown`); `status` exits with the worst it found: unreachable (8) over unhealthy "
            "(7) over unknown (8) over drift (3)"),
    Meaning("130",
            ("interrupted (129, 143: SIGHUP, SIGTERM)",),
            "interrupted (Ctrl-C or SIGINT from fabricgen's first line on; one that lands in the Python "
            "interpreter's own start-up, its first 20 ms or so, ends it with Python's error and status 1, before "
            "fabricgen has read or written anything)"),
    Meaning("129, 143",
            (),
            "ended by SIGHUP (a closed terminal) or SIGTERM (a cancelled CI job): cleaned up as for Ctrl-C, no "
            "temporary file or directory left"),
    Meaning("141",
            ("the reader of stdout went away (a broken pipe)",),
            "the reader of stdout went away (a broken pipe, e.g. `fabricgen argocd-generate \\| head`)"),
)


def epilog() -> str:
    """The exit-code table every command's `--help` ends with."""
    return "exit codes:\n" + "".join(f"  {m.codes:<4} " + "\n       ".join(m.short) + "\n" for m in MEANINGS if m.short)
