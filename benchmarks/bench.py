"""Speed and memory of fabricgen against what a user would run instead (a benchmark, not a test).

    .venv/bin/python benchmarks/bench.py [--runs N] [--json] [--source DIR]

Every row is a ratio of two medians measured in the same run, the commands taking
turns round by round, so that both sides see the same machine (the ratios hold on
a busy machine where absolute times do not):

| row | fabricgen | compared with | goal |
| --- | --- | --- | --- |
| plugin | `fabricgen argocd-generate` for zone hq of the lab | `kubectl kustomize rendered/lab/hq` | <= 2.0x |
| lab | `fabricgen render` of the lab | `python -c "import pydantic, ruamel.yaml, jinja2, jsonschema"` | <= 1x |
| 128 zones | `fabricgen render` of a 128-zone full mesh (16,256 routes) | the lab render | <= 4.0x |
| mesh-mem | the 128-zone render, output in `/dev/shm` (memory) | the lab render into `/dev/shm` | <= 4.0x |
| validate | `fabricgen validate` of 1,000 zones | (absolute: CPU seconds) | < 2 s |
| plugin-c | `argocd-generate`, zone hq, from the plugin's private cache | `kubectl kustomize` as above | <= 2.0x |
| check-rec | `fabricgen render --check` of the lab after a render (its record) | the import line | <= 1x |

Rows plugin, lab, lab-cur and mesh-cur run the full pipeline (`FABRICGEN_FAST_PATH=0`):
they are what every run costs when the fabric or the output changed, or when nothing in
fabricgen's private cache can answer (a fresh clone in CI). Rows plugin-c and check-rec are
what a developer's pre-commit and Argo CD pay when nothing changed (`fabricgen.fast_path`);
each says whether the fast path was taken, and a row whose run fell back to the full
pipeline FAILs. Every run uses a private cache of the benchmark's own.

The validate goal is on user + system seconds, which a busy machine does not
inflate as it does wall time; its ratio is 1,000 zones over a quarter of that (4x
when the rules are linear). Rows `lab-cur`, `mesh-cur` (output already current),
`mesh-edit` (one of the 128-zone output's files edited by hand: the render stages a
new tree in which the unchanged files are hard links), `files` (plain Python
creating the 128-zone tree: what its 1,300 files and 500 directories cost on this
disk, fabricgen aside), `plugin-mz` (the plugin for one zone of the 128: it builds
that zone alone, so what grows with the zones is reading and validating the fabric)
and `deps` (the plugin's imports alone) have no goal: they show what the others are
made of. Rows mesh and mesh-mem differ only in the filesystem that the files are
created on. Each row gives the peak RSS of its fabricgen process.
Python bytecode goes to a temporary directory (written in a warm-up round), as an
installed fabricgen runs from compiled modules. `--source DIR` runs fabricgen from
another source tree (e.g. an older checkout's `generator/`) with this interpreter,
for before/after figures. Exit 0 when every goal is met, 1 otherwise (each row
says PASS or FAIL).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAB = Path("sites/lab/fabric.yaml")
LAB_ZONE = "hq"
IMPORTS = "import pydantic, ruamel.yaml, jinja2, jsonschema"
DEPS = "from pydantic import BaseModel; import ruamel.yaml, jinja2"  # what a render of the lab imports
MAX_MESH = 128  # transit addresses .0-.127: the lower half of 169.254.100.0/24 Kube-OVN allocates from
RENDER_ZONES = 128
VALIDATE_ZONES = 1000
GOAL_PLUGIN = 2.0
GOAL_LAB = 1.0
GOAL_MESH = 4.0
GOAL_VALIDATE_S = 2.0
FULL = {"FABRICGEN_FAST_PATH": "0"}
MEMORY = Path("/dev/shm")  # a memory filesystem, where there is one
# Writes the files under argv[1] into a new directory argv[3] (`-o DIR`), as render writes them
# (one directory at a time, each file created and written once): what creating them costs.
WRITE_TREE = """import os, sys
src, dst = sys.argv[1], sys.argv[3]
for top, dirs, names in os.walk(src):
    rel = os.path.relpath(top, src)
    if rel != ".":
        os.mkdir(os.path.join(dst, rel), 0o755)
    for name in names:
        with open(os.path.join(top, name), "rb") as f:
            data = f.read()
        fd = os.open(os.path.join(dst, rel, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, data)
        os.close(fd)
"""  # the full pipeline even where a render record would answer
# Runs fabricgen's CLI and says on stderr whether it loaded the pipeline (pydantic).
PROBE = ("import sys\nfrom fabricgen.cli import main\nmain(sys.argv[1:])\n"
         "sys.stderr.write('\\nPIPELINE=%s\\n' % ('pydantic' in sys.modules))\n")


def fabric_text(zones: int) -> str:
    """A full-mesh fabric that passes every rule. Zones past the 128th have no transit address
    yet (warning FG106): the transit subnet holds no more Kube-OVN zones."""
    if not 2 <= zones <= 4096:
        raise ValueError("zones must be 2..4096")
    lines = [
        "apiVersion: fabricgen.io/v1alpha1",
        "kind: Fabric",
        "metadata:",
        f"  name: bench{zones}",
        "interconnection:",
        "  encapsulation: vxlan",
        "  autoRoute: false",
        "  database:",
        "    zone: z000",
        "    members:",
        *(f"      - {{node: z000-node-{m}, address: 10.10.10.{10 + m}}}" for m in (1, 2, 3)),
        "zones:",
    ]
    for i in range(zones):
        name = f"z{i:03d}"
        lines += [
            f"  - name: {name}",
            "    platform: harvester",
            f"    gatewayNodes: [{name}-node-1, {name}-node-2]",
            *([f"    transitAddress: 169.254.100.{i}"] if i < MAX_MESH else []),
            "    cluster: {podCIDR: 10.54.0.0/16, serviceCIDR: 10.55.0.0/16, primaryPodCIDR: 10.52.0.0/16}",
            "    backbone:",
            f"      cidr: 172.{16 + i // 256}.{i % 256}.0/24",
            "      network: {name: vsw-backbone}",
        ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Run:
    wall_s: float
    cpu_s: float  # user + system
    peak_rss_kib: int


@dataclass(frozen=True)
class Command:
    name: str
    argv: list[str]
    cwd: Path
    env: dict[str, str]
    ok: tuple[int, ...] = (0,)
    fresh_output: bool = False  # append `-o <new empty dir>`, so that render writes every file
    fast: bool = False  # meant to take the fast path: checked before measuring
    fresh_in: Path | None = None  # where the new empty dir is made (default: the temporary directory)
    prepare: Callable[[], None] | None = None  # run before each run, untimed


def takes_fast_path(cmd: Command) -> bool:
    """Whether the command answers without loading the pipeline (run once through PROBE)."""
    args = cmd.argv[3:]  # after `python -m fabricgen`
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cmd.cwd, env=cmd.env, capture_output=True,
                          text=True, check=False)
    return "\nPIPELINE=False\n" in done.stderr


def run_once(cmd: Command) -> Run:
    """Wall and CPU seconds and peak RSS of one subprocess; its output is discarded."""
    out = Path(tempfile.mkdtemp(prefix="fg-bench-out-", dir=cmd.fresh_in)) if cmd.fresh_output else None
    argv = [*cmd.argv, "-o", str(out)] if out is not None else cmd.argv
    if cmd.prepare is not None:
        cmd.prepare()
    try:
        with tempfile.TemporaryFile() as stderr:  # a file, not a pipe: a long report must not block
            start = time.perf_counter()
            proc = subprocess.Popen(argv, cwd=cmd.cwd, env=cmd.env, stdout=subprocess.DEVNULL, stderr=stderr)
            _pid, status, usage = os.wait4(proc.pid, 0)
            elapsed = time.perf_counter() - start
            stderr.seek(0)
            err = stderr.read().decode(errors="replace")
    finally:
        if out is not None:
            shutil.rmtree(out, ignore_errors=True)
    code = os.waitstatus_to_exitcode(status)
    if code not in cmd.ok:
        raise RuntimeError(f"{cmd.name}: {' '.join(argv)} exited {code}, expected {cmd.ok}: {err[-2000:]}")
    return Run(elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)


@dataclass
class Row:
    name: str
    what: str
    baseline: str
    goal: str
    ratio: float | None = None  # median wall time over the baseline's, the figure the goal is about
    cpu_ratio: float | None = None  # the same with user + system time
    seconds: float | None = None
    cpu_seconds: float | None = None
    baseline_seconds: float | None = None
    peak_rss_mib: float | None = None
    passed: bool | None = None  # None: no goal (a row for reading the others), or skipped
    note: str = ""


def measure(commands: Sequence[Command], runs: int) -> dict[str, list[Run]]:
    """Every command once per round, `runs` rounds, after one warm-up round (page cache, bytecode)."""
    for cmd in commands:
        run_once(cmd)
    results: dict[str, list[Run]] = {cmd.name: [] for cmd in commands}
    for _ in range(runs):
        for cmd in commands:
            results[cmd.name].append(run_once(cmd))
    return results


def median(runs: Sequence[Run], key: Callable[[Run], float]) -> float:
    return statistics.median(key(r) for r in runs)


def compare(results: dict[str, list[Run]], name: str, what: str, command: str, baseline: str, goal: str,
            note: str = "") -> Row:
    """A row: `command` against `baseline`, medians of the same rounds."""
    mine, theirs = results[command], results[baseline]
    wall, cpu = median(mine, lambda r: r.wall_s), median(mine, lambda r: r.cpu_s)
    base_wall, base_cpu = median(theirs, lambda r: r.wall_s), median(theirs, lambda r: r.cpu_s)
    return Row(name, what, "", goal, ratio=wall / base_wall, cpu_ratio=cpu / base_cpu, seconds=wall,
               cpu_seconds=cpu, baseline_seconds=base_wall,
               peak_rss_mib=max(r.peak_rss_kib for r in mine) / 1024, note=note)


def rows_from(results: dict[str, list[Run]], render_zones: int, validate_zones: int,
              fast_paths: dict[str, bool] | None = None) -> list[Row]:
    rows = []
    kustomize = f"kubectl kustomize rendered/lab/{LAB_ZONE}"
    if "kustomize" in results:
        plugin = compare(results, "plugin", f"argocd-generate, zone {LAB_ZONE} of the lab (full pipeline)", "plugin",
                         "kustomize",
                         f"<= {GOAL_PLUGIN}x")
        plugin.passed = plugin.ratio is not None and plugin.ratio <= GOAL_PLUGIN
    else:
        plugin = Row("plugin", f"argocd-generate, zone {LAB_ZONE} of the lab (full pipeline)", "", f"<= {GOAL_PLUGIN}x",
                     note="skipped: kubectl is not on PATH")
    plugin.baseline = kustomize
    rows.append(plugin)

    lab = compare(results, "lab", "render of the lab", "lab", "imports", f"<= {GOAL_LAB}x")
    lab.baseline, lab.passed = f'python -c "{IMPORTS}"', lab.ratio is not None and lab.ratio <= GOAL_LAB
    rows.append(lab)

    mesh = compare(results, "mesh", f"render of {render_zones} zones ({render_zones * (render_zones - 1)} routes)",
                   "mesh", "lab", f"<= {GOAL_MESH}x")
    mesh.baseline, mesh.passed = "the render of the lab", mesh.ratio is not None and mesh.ratio <= GOAL_MESH
    rows.append(mesh)
    if "mesh-memory" in results:
        memory = compare(results, "mesh-mem", f"render of {render_zones} zones into {MEMORY}", "mesh-memory",
                         "lab-memory", f"<= {GOAL_MESH}x", note="the same, files made in memory")
        memory.baseline = f"the render of the lab into {MEMORY}"
        memory.passed = memory.ratio is not None and memory.ratio <= GOAL_MESH
        rows.append(memory)

    validate = compare(results, "validate", f"validate {validate_zones} zones", "validate", "validate-quarter",
                       f"< {GOAL_VALIDATE_S:.0f} s", note="goal on CPU seconds; ratio 4x when linear in zones")
    validate.baseline = f"validate {validate_zones // 4} zones"
    validate.passed = validate.cpu_seconds is not None and validate.cpu_seconds < GOAL_VALIDATE_S
    rows.append(validate)

    fast = fast_paths or {}
    if "kustomize" in results:
        plugin_c = compare(results, "plugin-c", f"argocd-generate, zone {LAB_ZONE}, from its private cache (fast path)",
                           "plugin-cached", "kustomize", f"<= {GOAL_PLUGIN}x",
                           note="fast path taken" if fast.get("plugin-cached") else "FELL BACK to the pipeline")
        plugin_c.passed = bool(fast.get("plugin-cached")) and plugin_c.ratio is not None \
            and plugin_c.ratio <= GOAL_PLUGIN
    else:
        plugin_c = Row("plugin-c", f"argocd-generate, zone {LAB_ZONE}, from its private cache (fast path)", "",
                       f"<= {GOAL_PLUGIN}x", note="skipped: kubectl is not on PATH")
    plugin_c.baseline = kustomize
    rows.append(plugin_c)
    check_rec = compare(results, "check-rec", "render --check of the lab after a render (its record, fast path)",
                        "check-recorded", "imports", f"<= {GOAL_LAB}x",
                        note="fast path taken" if fast.get("check-recorded") else "FELL BACK to the pipeline")
    check_rec.baseline = "the import line of row lab"
    check_rec.passed = bool(fast.get("check-recorded")) and check_rec.ratio is not None \
        and check_rec.ratio <= GOAL_LAB
    rows.append(check_rec)

    # Rows for reading the ones above; no goal of their own.
    current = compare(results, "lab-cur", "render of the lab, output current (full pipeline)", "lab-current", "imports",
                      "-", note="what a run costs when no render record can answer")
    current.baseline = "the import line of row lab"
    rows.append(current)
    mesh_current = compare(results, "mesh-cur", f"render of {render_zones} zones, output current (full pipeline)",
                           "mesh-current", "lab-current", "-", note="the same without creating files")
    mesh_current.baseline = "row lab-cur"
    rows.append(mesh_current)
    mesh_edit = compare(results, "mesh-edit", f"render of {render_zones} zones, one output file edited",
                        "mesh-edited", "lab", "-", note="the other files linked into the new tree")
    mesh_edit.baseline = "row lab"
    rows.append(mesh_edit)
    if "kustomize" in results:
        plugin_mesh = compare(results, "plugin-mz", f"argocd-generate, one zone of {render_zones} (full pipeline)",
                              "plugin-mesh", "plugin", "-", note="the plugin's cost per zone and route")
        plugin_mesh.baseline = "row plugin"
        rows.append(plugin_mesh)
    files = compare(results, "files", f"python writing the {render_zones}-zone tree into an empty dir",
                    "files", "lab", "-", note="what making these files costs on this disk, without fabricgen")
    files.baseline = "row lab"
    rows.append(files)
    if "kustomize" in results:
        deps = compare(results, "deps", f'python -c "{DEPS}"', "deps", "kustomize", "-",
                       note="the plugin's imports alone, nothing run")
        deps.baseline = "kubectl kustomize of row plugin"
        rows.append(deps)
    return rows


def table(rows: Sequence[Row], runs: int) -> str:
    w1, w2 = max(len(r.what) for r in rows), max(len(r.baseline) for r in rows)
    head = (f"{'row':<9} {'fabricgen':<{w1}} {'compared with':<{w2}} {'ratio':>7} {'cpu':>7} {'goal':>7} "
            f"{'wall s':>7} {'cpu s':>7} {'base s':>7} {'peak MiB':>8}  verdict")
    out = [f"medians of {runs} interleaved runs, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}; "
           "ratio: wall time over the baseline's, cpu: user+system time over the baseline's", head, "-" * len(head)]
    for r in rows:
        if r.ratio is None:
            out.append(f"{r.name:<9} {r.what:<{w1}} {r.baseline:<{w2}} {'-':>7} {'-':>7} {r.goal:>7} {'-':>7} {'-':>7} "
                       f"{'-':>7} {'-':>8}  {r.note}")
            continue
        verdict = "" if r.passed is None else "PASS" if r.passed else "FAIL"
        note = f"  ({r.note})" if r.note else ""
        out.append(f"{r.name:<9} {r.what:<{w1}} {r.baseline:<{w2}} {r.ratio:>6.2f}x {r.cpu_ratio or 0:>6.2f}x "
                   f"{r.goal:>7} {r.seconds or 0:>7.3f} {r.cpu_seconds or 0:>7.3f} {r.baseline_seconds or 0:>7.3f} "
                   f"{r.peak_rss_mib or 0:>8.1f}  {verdict}{note}")
    return "\n".join(out) + "\n"


def _edit_one_file(output: Path) -> None:
    """A hand edit of one rendered file, which the next render undoes."""
    path = next(output.glob("*/z000/stage-0/backbone.yaml"))
    with path.open("a", encoding="utf-8") as file:
        file.write("# edited\n")


def commands(source: Path, workdir: Path, render_zones: int, validate_zones: int) -> list[Command]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source), os.environ.get("PYTHONPATH", "")]).rstrip(":")}
    # An installed fabricgen runs from bytecode compiled at install time, as its dependencies do
    # here. Without this a PYTHONDONTWRITEBYTECODE environment would compile fabricgen's own
    # modules from source in every run (the dependencies have their .pyc files), a cost no
    # user pays. The warm-up round writes the bytecode to a directory of its own, outside the tree.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(workdir / "pycache")
    for var in [v for v in env if v.startswith(("PARAM_", "ARGOCD_ENV_", "ARGOCD_APP_"))]:
        del env[var]
    fabricgen = [sys.executable, "-m", "fabricgen"]  # what the console script runs, in any source tree
    files = {}
    for zones in (render_zones, validate_zones, validate_zones // 4):
        files[zones] = workdir / f"fabric-{zones}.yaml"
        files[zones].write_text(fabric_text(zones))
    env["FABRICGEN_CACHE_DIR"] = str(workdir / "cache")  # the benchmark's own private cache
    # Output already current: the lab's as committed, rendered once more (its render record), the
    # mesh's rendered once. An older fabricgen (--source) may write other files (a stamp): rows
    # lab-cur and check-rec accept exit 3 in the warm-up round.
    current, recorded, mesh_current = workdir / "current", workdir / "current-recorded", workdir / "current-mesh"
    shutil.copytree(REPO / "rendered" / "lab", current / "lab")
    subprocess.run([*fabricgen, "render", "-q", str(LAB), "-o", str(recorded)], cwd=REPO, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    mesh_edited = workdir / "edited-mesh"
    for target in (mesh_current, mesh_edited):
        subprocess.run([*fabricgen, "render", "-q", str(files[render_zones]), "-o", str(target)], cwd=workdir,
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    full = {**env, **FULL}
    argocd = {"ARGOCD_ENV_ZONE": LAB_ZONE, "ARGOCD_ENV_FABRIC": LAB.as_posix()}
    cmds = [
        Command("imports", [sys.executable, "-c", IMPORTS], REPO, env),
        Command("deps", [sys.executable, "-c", DEPS], REPO, env),
        Command("lab", [*fabricgen, "render", "-q", str(LAB)], REPO, full, ok=(3,), fresh_output=True),
        Command("lab-current", [*fabricgen, "render", "-q", str(LAB), "-o", str(current)], REPO, full, ok=(0, 3)),
        Command("plugin", [*fabricgen, "argocd-generate"], REPO, {**full, **argocd}),
        Command("plugin-cached", [*fabricgen, "argocd-generate"], REPO, {**env, **argocd}, fast=True),
        Command("check-recorded", [*fabricgen, "render", "--check", "-q", str(LAB), "-o", str(recorded)], REPO, env,
                ok=(0, 3), fast=True),
        Command("mesh", [*fabricgen, "render", "-q", str(files[render_zones])], workdir, env, ok=(3,),
                fresh_output=True),
        Command("mesh-current", [*fabricgen, "render", "-q", str(files[render_zones]), "-o", str(mesh_current)],
                workdir, full),
        Command("mesh-edited", [*fabricgen, "render", "-q", str(files[render_zones]), "-o", str(mesh_edited)],
                workdir, full, ok=(3,), prepare=lambda: _edit_one_file(mesh_edited)),
        Command("files", [sys.executable, "-c", WRITE_TREE, str(mesh_current)], workdir, env, fresh_output=True),
        Command("plugin-mesh", [*fabricgen, "argocd-generate"], workdir,
                {**full, "ARGOCD_ENV_ZONE": "z001", "ARGOCD_ENV_FABRIC": files[render_zones].name}),
        Command("validate", [*fabricgen, "validate", str(files[validate_zones])], workdir, env),
        Command("validate-quarter", [*fabricgen, "validate", str(files[validate_zones // 4])], workdir, env),
    ]
    if os.access(MEMORY, os.W_OK):
        cmds += [
            Command("lab-memory", [*fabricgen, "render", "-q", str(LAB)], REPO, full, ok=(3,), fresh_output=True,
                    fresh_in=MEMORY),
            Command("mesh-memory", [*fabricgen, "render", "-q", str(files[render_zones])], workdir, env, ok=(3,),
                    fresh_output=True, fresh_in=MEMORY),
        ]
    kubectl = shutil.which("kubectl")
    if kubectl is not None:
        cmds.insert(0, Command("kustomize", [kubectl, "kustomize", f"rendered/lab/{LAB_ZONE}"], REPO, env))
    return cmds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=7, help="rounds; each row is a ratio of medians (default 7)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--source", type=Path, default=REPO / "generator",
                        help="directory holding the fabricgen package to measure (default: this checkout's)")
    parser.add_argument("--render-zones", type=int, default=RENDER_ZONES, help=argparse.SUPPRESS)
    parser.add_argument("--validate-zones", type=int, default=VALIDATE_ZONES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not 2 <= args.render_zones <= MAX_MESH or args.validate_zones < 8:
        parser.error(f"--render-zones takes 2..{MAX_MESH}, --validate-zones at least 8")
    with tempfile.TemporaryDirectory(prefix="fg-bench-") as tmp:
        cmds = commands(args.source.resolve(), Path(tmp), args.render_zones, args.validate_zones)
        results = measure(cmds, args.runs)
        fast_paths = {cmd.name: takes_fast_path(cmd) for cmd in cmds if cmd.fast}
    rows = rows_from(results, args.render_zones, args.validate_zones, fast_paths)
    if args.json:
        doc = {"rows": [asdict(r) for r in rows], "runs": args.runs, "python": sys.version.split()[0],
               "cpus": os.cpu_count()}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(table(rows, args.runs))
    return 0 if all(r.passed is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
