"""Command line: `fabricgen {validate,render,diff,transit,verify,graph,import,schema,init,rules,...} ...`.

`main(argv) -> int` parses arguments, calls one command module with keyword
arguments, and maps every exception to an exit code in one place.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import NoReturn

from fabricgen import __version__, exit_codes
from fabricgen.report import FORMATS

EPILOG = exit_codes.epilog()


def _add_diagnostics_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", dest="fmt", choices=FORMATS, default="auto",
                        help="diagnostics format (auto: github under GitHub Actions, else text)")


def _add_command_with_exit_codes(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help_text: str
) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with the exit-code table."""
    return sub.add_parser(name, help=help_text, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fabricgen",
        description="Validated, deterministic GitOps output for OVN fabrics from fabric.yaml.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"fabricgen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = _add_command_with_exit_codes(sub, "validate", "check fabrics and report every problem")
    p.add_argument("fabrics", nargs="+", type=Path, metavar="FABRIC")
    _add_diagnostics_format(p)

    p = _add_command_with_exit_codes(sub, "render", "write rendered/<site>/ (exit 3 when anything changed)")
    p.add_argument("fabrics", nargs="*", type=Path, metavar="FABRIC")
    p.add_argument("--all", dest="all_tracked", action="store_true",
                   help="every fabric.yaml git tracks (the pre-commit hooks); also remove tracked "
                        "<output>/<site>/ that no fabric renders. Run from the top of the repository")
    p.add_argument("-o", "--output", type=Path, default=Path("rendered"),
                   help="output root; each fabric owns <output>/<metadata.name>/ (default: rendered)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 3 if the output is not what render would write")
    _add_diagnostics_format(p)
    p.add_argument("-q", "--quiet", action="store_true", help="do not list changed files")

    p = _add_command_with_exit_codes(
        sub, "diff", "review what a fabric change does to the output (exit 3 if it changes)")
    p.add_argument("fabric", type=Path, metavar="FABRIC")
    p.add_argument("--base", default="HEAD", help="git revision to compare with (default: HEAD)")
    p.add_argument("--format", dest="fmt", choices=("text", "markdown", "json"), default="text",
                   help="markdown: a pull-request comment with a summary and one section per zone; "
                        "json: for tooling")
    p.add_argument("--no-verify", dest="lab", action="store_false",
                   help="leave the OVN-IC lab matrix (`fabricgen verify`) out of the markdown comment")

    p = _add_command_with_exit_codes(
        sub, "transit", "compare zones' transit addresses with `ovn-ic-sbctl show` (exit 3 if they differ)")
    p.add_argument("fabric", type=Path, metavar="FABRIC")
    p.add_argument("show", type=Path, nargs="?", default=None, metavar="SHOW",
                   help="file with the output of `ovn-ic-sbctl show` (default or '-': stdin)")
    p.add_argument("--format", dest="fmt", choices=("text", "json"), default="text")
    p.add_argument("--write", action="store_true",
                   help="update transitAddress in FABRIC in place, changing nothing else in the file")

    p = _add_command_with_exit_codes(
        sub, "verify", "prove the rendered routes and policy in a throwaway OVN-IC lab (exit 5 if a pair or a "
        "policy flow is not as it should be)")
    p.add_argument("fabric", type=Path, metavar="FABRIC")
    p.add_argument("--actual", type=Path, default=None, metavar="SHOW",
                   help="`ovn-ic-sbctl show` capture ('-': stdin): take zones' transit addresses from it")
    p.add_argument("--format", dest="fmt", choices=("text", "json", "markdown"), default="text")
    p.add_argument("--logical", action="store_true",
                   help="trace every pair with ovn-trace only, without chassis or packets (for very large fabrics)")
    p.add_argument("--no-underlay", dest="underlay", action="store_false",
                   help="skip the kernel underlay stage (the hosts' rendered nft and frr.conf in network "
                        "namespaces, which takes root)")
    p.add_argument("--ovn-prefix", type=Path, default=None, metavar="DIR",
                   help="run the OVN/OVS programs of DIR (DIR/bin, DIR/share/ovn; default: $FABRICGEN_OVN_PREFIX, "
                        "else the system's)")

    p = _add_command_with_exit_codes(
        sub, "status", "the live fabric against the fabric, and its control plane's health (exit 3/7/8 if not ok)")
    p.add_argument("fabric", type=Path, metavar="FABRIC")
    p.add_argument("--endpoints", type=Path, default=None, metavar="FILE",
                   help="direct OVSDB remotes and raft control sockets per AZ and for the IC database (default: "
                        "each zone through kubectl, deployments and an IC database in no zone at their declared "
                        "addresses)")
    p.add_argument("--capture", type=Path, default=None, metavar="DIR",
                   help="also write every raw output, with the command that printed it, to the new directory DIR")
    p.add_argument("--from", dest="source", type=Path, default=None, metavar="DIR",
                   help="judge a capture written by --capture instead of reading the live fabric")
    p.add_argument("--format", dest="fmt", choices=("text", "json", "markdown", "openmetrics"), default="text",
                   help="openmetrics: one series per check and state, for Prometheus (docs/watching.md)")
    p.add_argument("--wait", default=None, metavar="DURATION",
                   help="read and judge again until everything is ok or DURATION (90s, 5m, 1h) has passed")
    p.add_argument("--interval", type=float, default=10.0, metavar="SECONDS",
                   help="with --wait: seconds between readings (default 10)")
    p.add_argument("-q", "--problems", dest="problems_only", action="store_true",
                   help="text: list only the checks that are not ok")
    p.add_argument("--serve", default=None, metavar="HOST:PORT",
                   help="a Prometheus exporter: read every --interval seconds and answer GET /metrics from the "
                        "latest reading (docs/watching.md)")

    p = _add_command_with_exit_codes(sub, "graph", "draw the fabric's topology (Mermaid, Graphviz DOT or SVG)")
    p.add_argument("fabric", type=Path, metavar="FABRIC")
    p.add_argument("--format", dest="fmt", choices=("mermaid", "dot", "svg"), default="mermaid",
                   help="mermaid (default; renders in GitHub/GitLab), dot, or svg (needs Graphviz `dot`)")

    p = _add_command_with_exit_codes(
        sub, "import", "write a new fabric.yaml from a running fabric, and prove the round trip (exit 3 if not exact)")
    p.add_argument("fabric", type=Path, metavar="FABRIC", help="the fabric to write; it must not exist")
    p.add_argument("--cluster", dest="clusters", action="append", default=[], metavar="NAME=FILE",
                   help="a cluster's `kubectl get ... -o yaml` (or -o json) output; repeat per cluster and per file")
    p.add_argument("--show", type=Path, default=None, metavar="FILE",
                   help="the output of `ovn-ic-sbctl show` (the transit addresses and gateways)")
    p.add_argument("--from", dest="capture", type=Path, default=None, metavar="DIR",
                   help="a capture of `fabricgen status --capture` instead of --cluster, --show and --ic-nb-options")
    p.add_argument("--ic-nb-options", dest="ic_nb", type=Path, default=None, metavar="FILE",
                   help="the output of `ovn-ic-nbctl get IC_NB_Global . options` (vxlan_mode)")
    p.add_argument("--ic-raft", dest="ic_raft", type=Path, default=None, metavar="FILE",
                   help="an IC server member's `cluster/status OVN_IC_Northbound` (the raft members that run)")
    p.add_argument("--site", default=None, help="metadata.name (default: the fabric's directory name)")
    p.add_argument("--format", dest="fmt", choices=("text", "json"), default="text")

    p = _add_command_with_exit_codes(sub, "schema", "print (or write) the JSON schema of fabric.yaml, or its reference")
    p.add_argument("-o", "--output", type=Path, default=None,
                   help="write to this file instead of stdout (exit 3 when that changed it)")
    p.add_argument("--format", dest="fmt", choices=("json", "markdown"), default="json",
                   help="json: the JSON schema (default); markdown: the fabric.yaml reference")

    p = _add_command_with_exit_codes(
        sub, "init", "write a new fabric repository: sample fabric, schema, pre-commit hooks, CI, output")
    p.add_argument("directory", type=Path, nargs="?", default=Path("."), metavar="DIR",
                   help="where to write it (default: the working directory); no file there is replaced")
    p.add_argument("--site", default="example", help="the sample fabric's site name (default: example)")
    p.add_argument("--hook-repo", default=None, metavar="URL",
                   help="git URL of fabricgen for .pre-commit-config.yaml (default: where this one came from)")
    p.add_argument("--hook-rev", default=None, metavar="COMMIT",
                   help="full commit id (or tag) of fabricgen at --hook-repo")

    p = _add_command_with_exit_codes(sub, "rules", "list every diagnostic code")
    p.add_argument("--markdown", action="store_true", help="as a Markdown table")
    p.add_argument("-o", "--output", type=Path, default=None,
                   help="write to this file instead of stdout (exit 3 when that changed it)")

    p = _add_command_with_exit_codes(
        sub, "watching", "the reference of the fabric's metrics and alert rules (docs/watching.md)")
    p.add_argument("-o", "--output", type=Path, default=None,
                   help="write to this file instead of stdout (exit 3 when that changed it)")

    _add_command_with_exit_codes(
        sub, "argocd-generate", "Argo CD plugin: print one zone's objects (zone and fabric from the environment)")
    _add_command_with_exit_codes(
        sub, "krm", "KRM function: ResourceList on stdin (functionConfig kind FabricGenerator)")
    return parser


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "validate":
        from fabricgen.commands import validate

        return validate.run(fabrics=args.fabrics, fmt=args.fmt)
    if args.command == "render":
        from fabricgen import fast_path

        current = fast_path.render(fabrics=args.fabrics, output=args.output, check=args.check, fmt=args.fmt,
                                   quiet=args.quiet, all_tracked=args.all_tracked)
        if current is not None:
            return current
        from fabricgen.commands import render

        return render.run(fabrics=args.fabrics, output=args.output, check=args.check, fmt=args.fmt,
                          quiet=args.quiet, all_tracked=args.all_tracked)
    if args.command == "diff":
        from fabricgen.commands import diff

        return diff.run(fabric=args.fabric, base=args.base, fmt=args.fmt, lab=args.lab)
    if args.command == "transit":
        from fabricgen.commands import transit

        return transit.run(fabric=args.fabric, show=args.show, fmt=args.fmt, write=args.write)
    if args.command == "verify":
        from fabricgen.commands import verify

        return verify.run(fabric=args.fabric, actual=args.actual, fmt=args.fmt, logical=args.logical,
                          ovn_prefix=args.ovn_prefix, underlay=args.underlay)
    if args.command == "status":
        from fabricgen.commands import status

        return status.run(fabric=args.fabric, endpoints=args.endpoints, capture=args.capture, source=args.source,
                          fmt=args.fmt, wait=args.wait, interval=args.interval, problems_only=args.problems_only,
                          serve=args.serve)
    if args.command == "graph":
        from fabricgen.commands import graph

        return graph.run(fabric=args.fabric, fmt=args.fmt)
    if args.command == "import":
        from fabricgen.commands import import_

        return import_.run(fabric=args.fabric, clusters=args.clusters, show=args.show, ic_nb=args.ic_nb,
                           site=args.site, fmt=args.fmt, capture=args.capture, ic_raft=args.ic_raft)
    if args.command == "schema":
        from fabricgen.commands import schema

        return schema.run(output=args.output, fmt=args.fmt)
    if args.command == "init":
        from fabricgen.commands import init

        return init.run(directory=args.directory, site=args.site, hook_repo=args.hook_repo,
                        hook_rev=args.hook_rev)
    if args.command == "rules":
        from fabricgen.commands import rules

        return rules.run(markdown=args.markdown, output=args.output)
    if args.command == "watching":
        from fabricgen.commands import watching

        return watching.run(output=args.output)
    if args.command == "argocd-generate":
        from fabricgen import fast_path

        printed = fast_path.argocd_generate(cwd=Path.cwd(), environ=os.environ)
        if printed is not None:
            return printed
        from fabricgen.commands import argocd_generate

        return argocd_generate.run(cwd=Path.cwd(), environ=os.environ)
    if args.command == "krm":
        from fabricgen.commands import krm

        return krm.run(stdin=sys.stdin)
    raise AssertionError(args.command)  # pragma: no cover - argparse rejects others


_interrupted = False  # a SIGINT, SIGTERM or SIGHUP arrived (`_on_interrupt`); see `main`
_signal_number = 0  # which one, for the exit status (128 + its number)


def _on_interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGINT during a run: Python's own handling (KeyboardInterrupt), remembered, so that an
    exception a library makes of it (pyo3's PanicException) still ends as an interrupt. SIGTERM
    (a cancelled CI job) and SIGHUP (a closed terminal) are taken the same way, so that every
    command cleans up as for Ctrl-C (its temporary file or directory removed) instead of dying
    where it stands; the exit status says which signal it was."""
    global _interrupted, _signal_number
    _interrupted = True
    _signal_number = signum
    raise KeyboardInterrupt


def _interrupted_status() -> int:
    return 128 + _signal_number if _signal_number not in (0, signal.SIGINT) else exit_codes.INTERRUPTED


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        sys.stderr.write("fabricgen: interrupted\n")
        return _interrupted_status()
    except (SystemExit, GeneratorExit):
        raise
    except BaseException:
        if not _interrupted:
            raise
        sys.stderr.write("fabricgen: interrupted\n")
        return _interrupted_status()


def _main(argv: Sequence[str] | None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "render" and bool(args.fabrics) == args.all_tracked:
        parser.error("render: give FABRIC files or --all, not both" if args.all_tracked
                     else "render: the following arguments are required: FABRIC (or --all)")
    if args.command in LIVE_COMMANDS:
        # What these commands print may come from the live side: one rule for all of it.
        from fabricgen.live_text import SafeStream

        out, err = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
        try:
            return _run(args)
        finally:
            sys.stdout, sys.stderr = out, err
    return _run(args)


# The commands that read what clusters and OVN print (`fabricgen.live_text`).
LIVE_COMMANDS = frozenset({"import", "status", "transit", "verify"})


def _run(args: argparse.Namespace) -> int:
    from fabricgen import report
    from fabricgen.errors import FabricgenError, InvalidFabricError

    try:
        code = _dispatch(args)
        sys.stdout.flush()  # here, so that a reader gone away is a broken pipe, not an error at exit
        return code
    except BrokenPipeError:
        _discard_stdout()
        return exit_codes.BROKEN_PIPE
    except InvalidFabricError as exc:
        sys.stderr.write(report.format_diagnostics(exc.diagnostics, getattr(args, "fmt", "text")))
        sys.stderr.write(f"fabricgen: {report.summary(exc.diagnostics)}; nothing written\n")
        return exit_codes.INVALID
    except FabricgenError as exc:
        sys.stderr.write(f"fabricgen: error: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("fabricgen: interrupted\n")
        return _interrupted_status()
    except Exception as exc:
        if os.environ.get("FABRICGEN_DEBUG"):
            traceback.print_exc()
        sys.stderr.write(
            f"fabricgen: internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in fabricgen; set FABRICGEN_DEBUG=1 for the traceback and report it.\n"
        )
        return exit_codes.INTERNAL


def _discard_stdout() -> None:
    """Point stdout at /dev/null: what is still buffered for a reader that went away is dropped
    instead of failing again when the interpreter flushes it at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)


def run() -> NoReturn:
    """The `fabricgen` command itself (`fabricgen.console.run` calls it): `main`, then exit.

    The cyclic garbage collector is off for the run. Loading the pipeline creates hundreds
    of thousands of objects that live until the process ends (modules, classes, pydantic's
    schemas and validators); collections kept walking them and freed nothing, and the
    pipeline leaves no cyclic garbage worth collecting: peak memory of a 128-zone render
    and of validating 1,000 zones is the same with and without collections, which took
    about a tenth of a plugin run or a lab render and a fifth of validating 1,000 zones.

    The process ends here. Interpreter shutdown would first walk every object the run
    created in a last garbage collection, about a fifth of a lab render. Frozen objects
    are left out of it; everything else about exiting (flushing, atexit) is unchanged.
    Neither is in `main`, which tests and other callers run in their own process.
    """
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(number) is not signal.SIG_IGN:  # ignored when started (nohup): stays ignored
            signal.signal(number, _on_interrupt)
    gc.disable()
    code = main()
    gc.freeze()
    sys.exit(code)
