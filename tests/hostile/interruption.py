"""Family `interruption`: what an interrupted, concurrent or starved render leaves behind.

Held means the site directory is exactly the previous tree or exactly the new one, never a
mix (docs/output.md, "How render writes": the new tree is staged beside the old one and swapped in with one
`renameat2(RENAME_EXCHANGE)`), no staging directory stays after the next render, and a
failed render exits 1 with a message, never 4 or a traceback.

- `kill -9` and SIGINT (Ctrl-C: exit 130) of `render` at random points of a 48-zone render over
  the previous output;
- two renders at once into one output directory (two fabrics, and the same fabric twice);
- a full disk: the output on a small tmpfs in a private mount namespace (root here: `unshare
  --mount` and `mount -t tmpfs -o size=...`; a loop device is not used), filled to leave 0
  bytes to about half the new tree free, and one out of inodes; after freeing it, render
  completes;
- a read-only output: a read-only bind mount (root, private mount namespace), and as an
  unprivileged user (nobody via setpriv when root) a site directory or output root it may not
  write;
- `verify` interrupted by SIGINT (to its process group, as Ctrl-C) or SIGTERM (to it alone) at
  random points: it never reports success and leaves no daemon (skipped without the OVN
  programs).

Steps that need a mount run in `unshare --mount --propagation private`, through this script
(`--inner SPEC`), so a mount never outlives its case.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from hostile.harness import (
    NOBODY,
    Case,
    Context,
    Failed,
    Result,
    Skip,
    Workdir,
    nobody_runs,
    snapshot,
    tree_difference,
)
from hostile.samples import SITE_FILE, mesh_fabric

FAMILY = "interruption"
ZONES = 48
OLD = mesh_fabric("mesh", ZONES)
NEW = mesh_fabric("mesh", ZONES, offset=3, skip=(5,))
STAGING = ".fabricgen-staging-"


def cases(ctx: Context) -> list[Case]:
    trees = _Trees(ctx)
    found: list[Case] = []
    kills = 4 if ctx.quick else 16
    for i in range(kills):
        found.append(Case(FAMILY, f"kill-9-during-render-{i:02d}", lambda w, i=i: _kill(ctx, trees, w, i),
                          quick=i < 2))
    for i in range(1 if ctx.quick else 6):
        found.append(Case(FAMILY, f"sigint-during-render-{i:02d}",
                          lambda w, i=i: _kill(ctx, trees, w, i, signal.SIGINT), quick=i < 1))
    found.append(Case(FAMILY, "sigint-at-start-up", lambda w: _sigint_at_start_up(ctx, w)))
    for i in range(2 if ctx.quick else 6):
        found.append(Case(FAMILY, f"two-renders-at-once-{i:02d}", lambda w, i=i: _concurrent(ctx, trees, w, i),
                          quick=i < 1))
    for leave in ("0", "16k", "64k", "half", "inodes"):
        found.append(Case(FAMILY, f"full-disk-{leave}", lambda w, k=leave: _full_disk(ctx, trees, w, k),
                          quick=leave == "0"))
    for how in ("read-only-bind-mount", "site-directory-not-writable", "output-root-not-writable"):
        found.append(Case(FAMILY, f"read-only-output-{how}", lambda w, h=how: _read_only(ctx, trees, w, h),
                          quick=how == "site-directory-not-writable"))
    for i in range(2 if ctx.quick else 8):
        sig = signal.SIGINT if i % 2 == 0 else signal.SIGTERM
        found.append(Case(FAMILY, f"verify-interrupted-{sig.name}-{i:02d}", lambda w, i=i, s=sig: _verify(ctx, w, i, s),
                          quick=i < 1))
    return found


class _Trees:
    """The output of OLD and of NEW, rendered once as the cases render them (and, for two renders
    at once, of OLD from another file)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._lock = threading.Lock()
        self._trees: dict[tuple[str, str], dict[str, Any]] = {}
        self.seconds = 1.0

    def tree(self, rel: str, text: str) -> dict[str, Any]:
        with self._lock:
            if (rel, text) not in self._trees:
                work = Workdir(self.ctx, Case(FAMILY, "reference", lambda w: None))
                work.write(rel, text)
                result = work.fabricgen("render", rel, "-o", "out", "-q", codes={3})
                if work.reasons or result.code != 3:
                    raise Failed(["setting up: a reference render failed", *work.reasons])
                self._trees[(rel, text)] = snapshot(work.path / "out" / "mesh")
                if text == NEW:
                    self.seconds = result.wall
            return self._trees[(rel, text)]

    def get(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.tree(SITE_FILE, OLD), self.tree(SITE_FILE, NEW)


def _prepared(work: Workdir, root: str = "out") -> Path:
    """OLD rendered into `root`; the fabric file now holds NEW."""
    work.write(SITE_FILE, OLD)
    result = work.fabricgen("render", SITE_FILE, "-o", root, "-q", codes={3})
    if result.code != 3:
        raise Failed([f"setting up: the first render failed: {result.brief()}"])
    work.write(SITE_FILE, NEW)
    return work.path / root


def _judge(work: Workdir, trees: _Trees, out: Path, what: str,
           others: tuple[dict[str, Any], ...] = ()) -> str:
    old, new = trees.get()
    now = snapshot(out / "mesh")
    if now == old:
        return "old"
    if now == new:
        return "new"
    if any(now == other for other in others):
        return "other"
    work.fail(f"after {what} the site directory is neither the previous tree nor the new one: "
              f"against the old: {tree_difference(old, now)}; against the new: {tree_difference(new, now)}")
    return "mixed"


def _follow_up(work: Workdir, trees: _Trees, out: Path) -> None:
    """The next render completes the new tree and leaves no staging behind."""
    result = work.fabricgen("render", SITE_FILE, "-o", str(out.relative_to(work.path)), "-q", codes={0, 3})
    work.check(result.code in (0, 3), f"the render after it failed: {result.brief()}")
    if _judge(work, trees, out, "the next render") != "new":
        work.fail("the next render did not bring the site directory to the new tree")
    leftovers = [p.name for p in out.iterdir() if p.name.startswith(STAGING)]
    work.check(not leftovers, f"staging directories left after the next render: {leftovers}")


# --- kill -9 ------------------------------------------------------------------------------------

def _kill(ctx: Context, trees: _Trees, work: Workdir, number: int, sig: signal.Signals = signal.SIGKILL) -> str:
    """`sig` to render at a random point: SIGKILL (nothing runs after it) or SIGINT (Ctrl-C: exit
    130, docs/diagnostics.md "Exit codes")."""
    trees.get()
    out = _prepared(work)
    rng = random.Random(f"{ctx.seed}/{sig.name}/{number}")
    # a quarter of the signals early (parsing, rendering), the rest about when files are written
    # and the trees swapped; never in the interpreter's start-up (`sigint-at-start-up`)
    delay = max(0.3, trees.seconds * (rng.uniform(0.0, 0.5) if number % 4 == 0 else rng.uniform(0.5, 1.3)))
    running = work.spawn([ctx.fabricgen, "render", SITE_FILE, "-o", "out", "-q"])
    time.sleep(delay)
    finished = running.finished()
    if not finished:
        os.kill(running.proc.pid, sig)
    result = work.wait(running, timeout=60)
    if finished:
        work.expect_documented(result, "render", {3})
    elif sig == signal.SIGKILL:
        work.check(result.code in (-signal.SIGKILL, 3), f"render killed with SIGKILL ended with {result.code}")
    else:  # interrupted, or done by the time the signal came
        work.expect_documented(result, "render", {130, 3})
    state = _judge(work, trees, out, f"{sig.name} at {delay:.2f} s")
    _follow_up(work, trees, out)
    return f"{sig.name} at {delay:.2f} s: exit {result.code}, {state} tree" if not finished else \
        f"finished before {delay:.2f} s"


# What Python prints when an interrupt lands in its own start-up (importing `site`), before the
# first line of fabricgen runs: its status is 1 and nothing of fabricgen has run
# (docs/diagnostics.md, exit code 130).
_BEFORE_FABRICGEN = "Fatal Python error: init_import_site: Failed to import the site module"


def _sigint_at_start_up(ctx: Context, work: Workdir) -> str:
    """Ctrl-C within the first 200 ms, while Python imports fabricgen: exit 130 (or the SIGINT
    status, which a shell reports as 130), never a traceback of fabricgen's; an interrupt in the
    interpreter's own start-up, before fabricgen's first line, ends it as Python does (status 1,
    its fatal error), which is told apart, counted, and must leave nothing written."""
    work.write(SITE_FILE, OLD)
    seen = []
    for step in range(10):
        delay = 0.02 + 0.02 * step
        running = work.spawn([ctx.fabricgen, "render", SITE_FILE, "-o", "out", "-q"])
        time.sleep(delay)
        if not running.finished():
            os.kill(running.proc.pid, signal.SIGINT)
        result = work.wait(running, timeout=60)
        if result.code == 1 and result.err.startswith(_BEFORE_FABRICGEN):
            seen.append(f"{delay:.2f} s: 1 (interpreter start-up)")
            work.check(not (work.path / "out").exists(), "an interrupt in the interpreter's start-up wrote output")
            continue
        seen.append(f"{delay:.2f} s: {result.code}")
        work.expect_documented(result, "render", {130, -signal.SIGINT, 3})
    return "; ".join(seen)


# --- two at once ---------------------------------------------------------------------------------

def _concurrent(ctx: Context, trees: _Trees, work: Workdir, number: int) -> str:
    """NEW from site/fabric.yaml and, at the same time, NEW again or OLD from site2/fabric.yaml."""
    trees.get()
    out = _prepared(work)
    same = number % 3 == 2
    work.write("site2/fabric.yaml", NEW if same else OLD)
    other = trees.tree("site2/fabric.yaml", NEW if same else OLD)
    second = SITE_FILE if same else "site2/fabric.yaml"
    runs = [work.spawn([ctx.fabricgen, "render", SITE_FILE, "-o", "out", "-q"]),
            work.spawn([ctx.fabricgen, "render", second, "-o", "out", "-q"])]
    for result in [work.wait(r, timeout=120) for r in runs]:
        work.expect_documented(result, "render", {0, 3})
    state = _judge(work, trees, out, "two renders at once", others=(other,))
    leftovers = [p.name for p in out.iterdir() if p.name.startswith(STAGING)]
    work.check(not leftovers, f"staging directories left by two renders at once: {leftovers}")
    if same:
        work.check(state == "new", "two renders of the same fabric did not leave its tree")
    else:
        work.check(state in ("new", "other"), f"two renders at once left the {state} tree, neither run's")
    return f"{'same fabric' if same else 'two fabrics'}: {state} tree"


# --- mounts ----------------------------------------------------------------------------------------

def in_mount_namespace(work: Workdir, steps: list[dict[str, Any]], timeout: float = 300) -> list[Any]:
    """Run `steps` in a private mount namespace (see `inner`); each step's result, in order."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        raise Skip("needs root and unshare for a private mount namespace (a tmpfs or a read-only bind mount)")
    spec = work.path / "_namespace-steps.json"
    results = work.path / "_namespace-results.json"
    spec.write_text(json.dumps({"env": work.env(), "cwd": str(work.path), "steps": steps, "results": str(results)}))
    script = Path(__file__).resolve().parents[1] / "hostile_run.py"
    done = work.run(["unshare", "--mount", "--propagation", "private", sys.executable, script, "--inner", spec],
                    timeout=timeout)
    if done.code != 0 or not results.exists():
        raise Failed([f"the steps in a private mount namespace failed: {done.brief()}"])
    found: list[Any] = json.loads(results.read_text())
    for i, step in enumerate(steps):  # a snapshot's entries come back from JSON as lists
        if "snapshot" in step:
            found[i] = {path: tuple(entry) for path, entry in found[i].items()}
    with work.log.open("a", encoding="utf-8") as log:
        for step, result in zip(steps, found, strict=True):
            if "run" in step:
                log.write(f"$ (in the mount namespace) {' '.join(work.rel(a) for a in step['run'])}\n"
                          f"# exit {result['code']}\n" + "".join(f"# stderr| {line}\n" for line in
                                                                result["stderr"].splitlines()[:40]))
            else:
                shown = {k: (v if k != "text" else f"<{len(v)} characters>") for k, v in step.items()}
                log.write(f"$ (in the mount namespace) {work.rel(json.dumps(shown))}\n")
    return found


def inner(spec_path: str) -> int:
    """`hostile_run.py --inner SPEC`, inside `unshare --mount`: do each step, write the results."""
    spec = json.loads(Path(spec_path).read_text())
    env, cwd = spec["env"], spec["cwd"]
    results: list[Any] = []
    for step in spec["steps"]:
        if "tmpfs" in step:
            target = Path(step["tmpfs"])
            saved = None
            if step.get("copy") and target.exists():
                saved = target.with_name(target.name + ".before-mount")
                shutil.copytree(target, saved, symlinks=True)
            target.mkdir(parents=True, exist_ok=True)
            subprocess.run(["mount", "-t", "tmpfs", "-o", step.get("options", "size=4m"), "tmpfs", str(target)],
                           check=True)
            if saved is not None:
                for entry in saved.iterdir():
                    (shutil.copytree if entry.is_dir() else shutil.copy2)(entry, target / entry.name)
                shutil.rmtree(saved)
            results.append(None)
        elif "ro-bind" in step:
            target = step["ro-bind"]
            subprocess.run(["mount", "--bind", target, target], check=True)
            subprocess.run(["mount", "-o", "remount,bind,ro", target], check=True)
            results.append(None)
        elif "write" in step:
            Path(step["write"]).parent.mkdir(parents=True, exist_ok=True)
            Path(step["write"]).write_text(step["text"], encoding="utf-8")
            results.append(None)
        elif "fill" in step:
            results.append(_fill(Path(step["fill"]), step["leave"]))
        elif "unfill" in step:
            for filler in Path(step["unfill"]).glob(".filler*"):
                filler.unlink()
            results.append(None)
        elif "run" in step:
            done = subprocess.run(step["run"], cwd=step.get("cwd", cwd), env=env, capture_output=True,
                                  timeout=step.get("timeout", 120), check=False)
            results.append({"code": done.returncode, "stdout": done.stdout.decode("utf-8", "replace")[-20000:],
                            "stderr": done.stderr.decode("utf-8", "replace")[-20000:]})
        elif "snapshot" in step:
            results.append(snapshot(Path(step["snapshot"])))
        elif "free" in step:
            fs = os.statvfs(step["free"])
            results.append({"bytes": fs.f_bavail * fs.f_frsize, "inodes": fs.f_favail})
    Path(spec["results"]).write_text(json.dumps(results))
    return 0


def _fill(directory: Path, leave: int | str) -> dict[str, int]:
    """Take the filesystem's free space (or, for "inodes", its free inodes) down to `leave`."""
    if leave == "inodes":
        number = 0
        try:
            while True:
                (directory / f".filler-{number}").touch()
                number += 1
        except OSError:
            pass
        return {"inodes_taken": number}
    fs = os.statvfs(directory)
    free = fs.f_bavail * fs.f_frsize
    size = max(0, free - int(leave))
    written = 0
    with open(directory / ".filler", "wb") as handle:
        chunk = b"\0" * 65536
        try:
            while written < size:
                written += handle.write(chunk[: min(len(chunk), size - written)])
                handle.flush()
        except OSError:
            pass
    return {"free_before": free, "filled": written}


def _new_tree_files(trees: _Trees) -> int:
    _old, new = trees.get()
    return sum(1 for e in new.values() if e[0] == "file")


def _full_disk(ctx: Context, trees: _Trees, work: Workdir, leave: str) -> str:
    old, new = trees.get()
    disk = work.path / "disk"
    disk.mkdir()
    files = _new_tree_files(trees)
    leaves: dict[str, int | str] = {"0": 0, "16k": 16384, "64k": 65536, "half": files * 4096 // 2,
                                    "inodes": "inodes"}
    fabricgen = str(ctx.fabricgen)
    # the case's layout on the tmpfs (site/fabric.yaml beside out/), so the files name the fabric
    # as the reference renders do
    at = {"cwd": str(disk)}
    steps: list[dict[str, Any]] = [
        {"tmpfs": str(disk), "options": "size=8m,nr_inodes=4096,mode=0755"},
        {"write": str(disk / SITE_FILE), "text": OLD},
        {"run": [fabricgen, "render", SITE_FILE, "-o", "out", "-q"], **at},
        {"snapshot": str(disk / "out" / "mesh")},
        {"write": str(disk / SITE_FILE), "text": NEW},
        {"fill": str(disk), "leave": leaves[leave]},
        {"free": str(disk)},
        {"run": [fabricgen, "render", SITE_FILE, "-o", "out"], **at},
        {"snapshot": str(disk / "out" / "mesh")},
        {"snapshot": str(disk / "out")},
        {"unfill": str(disk)},
        {"run": [fabricgen, "render", SITE_FILE, "-o", "out", "-q"], **at},
        {"snapshot": str(disk / "out" / "mesh")},
        {"snapshot": str(disk / "out")},
    ]
    results = in_mount_namespace(work, steps)
    first, starved, after, root_after, again, final, root_final = (results[2], results[7], results[8], results[9],
                                                                   results[11], results[12], results[13])
    if not work.check(first["code"] == 3 and results[3] == old, "setting up: the first render on the tmpfs failed"):
        return ""
    _documented(work, starved, {0, 1, 3})
    if starved["code"] in (0, 3):
        work.check(after == new, "render on a full disk said it succeeded but the tree is not the new one")
    else:
        work.check(starved["code"] == 1, f"render on a full disk exits {starved['code']}, not 1")
        difference = tree_difference(old, after)
        work.check(not difference, f"render on a full disk changed the previous tree: {difference}")
    leftovers = [p for p in root_after if p.startswith(STAGING)]
    work.check(not leftovers, f"staging left on the full disk: {leftovers[:3]}")
    _documented(work, again, {0, 3})
    work.check(final == new, f"after freeing the disk render did not write the new tree: {tree_difference(new, final)}")
    work.check(not [p for p in root_final if p.startswith(STAGING)], "staging left after the disk was freed")
    return f"free before: {results[6]}; render exit {starved['code']}"


def _documented(work: Workdir, step: dict[str, Any], codes: set[int]) -> None:
    fake = Result([], work.path, step["code"], step["stdout"].encode(), step["stderr"].encode(), 0, 0, 0, False)
    work.expect_documented(fake, "render", codes)


def _read_only(ctx: Context, trees: _Trees, work: Workdir, how: str) -> None:
    old, _new = trees.get()
    out = _prepared(work)
    if how == "read-only-bind-mount":
        results = in_mount_namespace(work, [{"ro-bind": str(out)},
                                            {"run": [str(ctx.fabricgen), "render", SITE_FILE, "-o", "out"]},
                                            {"snapshot": str(out)}])
        step = results[1]
        _documented(work, step, {1})
    else:
        target = out / "mesh" if how == "site-directory-not-writable" else out
        if os.geteuid() == 0:
            nobody_runs(ctx)
            owned = [work.path / "site", work.path / SITE_FILE, *([out, *out.rglob("*")] if target != out else
                                                                  list(out.rglob("*")))]
            for path in owned:
                if not (target == out / "mesh" and path == target):
                    os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
            os.chown(target, 0, 0)
            target.chmod(0o555)
            cache = work.path / "_nobody"
            cache.mkdir(mode=0o700)
            os.chown(cache, NOBODY, NOBODY)
            result = work.fabricgen("render", SITE_FILE, "-o", "out", user=NOBODY, codes={1},
                                    env=work.env({"HOME": str(cache)}, cache=cache / "fabricgen"))
        else:
            target.chmod(0o555)
            result = work.fabricgen("render", SITE_FILE, "-o", "out", codes={1})
        target.chmod(0o755)
        work.check(result.code == 1, f"render into an output it may not write exits {result.code}, not 1")
    difference = tree_difference(old, snapshot(out / "mesh"))
    work.check(not difference, f"the previous tree changed: {difference}")


# --- verify interrupted ------------------------------------------------------------------------------

def _ovn_missing() -> list[str]:
    tools = ("ovsdb-server", "ovsdb-tool", "ovn-northd", "ovn-ic", "ovn-nbctl", "ovn-trace", "ovn-ic-nbctl")
    path = os.environ.get("PATH", "") + ":/usr/local/sbin:/usr/sbin:/sbin"
    return [t for t in tools if shutil.which(t, path=path) is None]


def _leftovers(marker: str) -> list[tuple[int, str]]:
    """Processes whose command line or working directory names `marker` (the case's TMPDIR)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if marker in cmdline or cwd.startswith(marker):
            found.append((int(entry.name), cmdline.strip()[:200]))
    return found


_verify_lock = threading.Lock()
_verify_time: list[float] = []


def _verify_args(ctx: Context) -> list[str]:
    """verify of the lab with the OVN it runs (25.03, from the repository's `.ovn/25.03` that
    `scripts/setup.sh --test` makes: packets through every daemon, the proof that has the most to
    stop); without it the system's OVN proves it logically (23.03 has no vxlan_mode, so its data
    plane loses the lab's VXLAN pairs by design)."""
    prefix = ctx.repo / ".ovn" / "25.03"
    if (prefix / "bin" / "ovn-controller").exists():
        return ["verify", SITE_FILE, "--ovn-prefix", str(prefix)]
    return ["verify", SITE_FILE, "--logical"]


def _verify_seconds(ctx: Context, work: Workdir) -> float:
    """How long one uninterrupted verify of the lab takes here (measured once, in the first case
    that asks, so a failure is kept with that case's commands)."""
    with _verify_lock:
        if not _verify_time:
            result = work.fabricgen(*_verify_args(ctx), timeout=180)
            if result.code != 0:
                raise Failed([f"setting up: verify of the lab does not succeed: {result.brief()}", *work.reasons])
            _verify_time.append(result.wall)
        return _verify_time[0]


def _verify(ctx: Context, work: Workdir, number: int, sig: signal.Signals) -> str:
    missing = _ovn_missing()
    if missing:
        raise Skip(f"the OVN programs are missing ({', '.join(missing)}): verify is not interrupted")
    work.write(SITE_FILE, (ctx.repo / "sites" / "lab" / "fabric.yaml").read_text())
    rng = random.Random(f"{ctx.seed}/verify/{number}")
    delay = rng.uniform(0.02, 0.95) * _verify_seconds(ctx, work)
    running = work.spawn([ctx.fabricgen, *_verify_args(ctx)])
    time.sleep(delay)
    finished = running.finished()
    if not finished:
        if sig == signal.SIGINT:
            os.killpg(running.proc.pid, signal.SIGINT)  # Ctrl-C: the whole foreground process group
        else:
            os.kill(running.proc.pid, signal.SIGTERM)
    result = work.wait(running, timeout=60, kill_group=False)
    marker = str(work.tmp)
    deadline = time.monotonic() + 5
    left = _leftovers(marker)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = _leftovers(marker)
    for pid, _cmd in left:  # ours: started by the verify this case ran
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(running.proc.pid, signal.SIGKILL)
    work.check(not left, f"verify interrupted by {sig.name} at {delay:.2f} s left processes running: "
                         + "; ".join(f"{pid} {cmd}" for pid, cmd in left[:4]))
    if finished:
        work.expect_documented(result, "verify")
        return f"finished before {delay:.2f} s (exit {result.code})"
    allowed = {130} if sig == signal.SIGINT else {130, 143}
    work.expect_documented(result, "verify", allowed)
    work.check(result.code != 0, f"verify interrupted by {sig.name} reported success")
    return f"{sig.name} at {delay:.2f} s: exit {result.code}"
