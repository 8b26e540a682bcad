"""Nothing fabricgen did not produce passes as its output, and it never destroys its input.

- A pull request edits a route in `rendered/lab/hq/stage-2/default-vpc-routes.yaml` and commits
  a committed stamp `rendered/lab/.fabricgen.json` (the retired format, every digest right):
  `render --check` says out of date (3) in the developer's clone (its private cache knows the
  old tree) and in a fresh CI clone, also with `--all`; `render` puts the fabric's bytes back;
  the Argo CD plugin prints the zone as the fabric renders it, also when the stamp lists no
  manifests or one outside the repository (docs/safety.md, "What is trusted where").
- `-o` over an input fabric or a tracked file fabricgen did not write is refused before
  anything is touched (exit 1), `--check` too; an output root that is a link to sites/ as well.
- `render a b -o DIR` where b's site directory cannot be replaced writes neither (docs/output.md,
  "How render writes": all or none), or lists every site it wrote.
- A symlink, a link to a directory out of the tree and a FIFO planted in the output are removed,
  never followed or opened.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

from hostile.harness import NOBODY, Case, Context, Skip, Workdir, nobody_runs, snapshot, tree_difference
from hostile.samples import fabric_repository, git
from hostile.targeted.common import case, edit, sample

LAB = "sites/lab/fabric.yaml"
NAT = "sites/nat/fabric.yaml"
ROUTES = "rendered/lab/hq/stage-2/default-vpc-routes.yaml"
FORGED_HOP = '"169.254.100.99"'


def cases(ctx: Context) -> list[Case]:
    found = [
        case("stamp-forgery/render-check-in-the-developers-clone", lambda w: _stamp_check(ctx, w, ci=False), True),
        case("stamp-forgery/render-check-in-a-fresh-ci-clone", lambda w: _stamp_check(ctx, w, ci=True)),
        case("stamp-forgery/render-restores-the-fabrics-bytes", lambda w: _stamp_render(ctx, w)),
    ]
    for variant in ("edited-route", "no-manifests", "manifest-outside-the-repository"):
        found.append(case(f"stamp-forgery/plugin-{variant}", lambda w, v=variant: _stamp_plugin(ctx, w, v),
                          variant == "no-manifests"))
    for name, cwd, args in (
            ("cd-sites-o-dot", "sites", ("nat/fabric.yaml", "-o", ".")),
            ("cd-sites-o-dot-check", "sites", ("nat/fabric.yaml", "-o", ".", "--check")),
            ("o-sites", ".", (NAT, "-o", "sites")),
            ("o-sites-slash-dot", ".", (NAT, "-o", "sites/./")),
            ("all-o-sites", ".", ("--all", "-o", "sites")),
            ("o-tracked-foreign-file", ".", (NAT, "-o", "docs")),
            ("o-the-fabric-file", ".", (NAT, "-o", NAT)),
            ("rendered-is-a-link-to-sites", ".", (NAT,))):
        found.append(case(f"output-over-inputs/{name}", lambda w, c=cwd, a=args, n=name: _over_inputs(ctx, w, n, c, a),
                          name in ("cd-sites-o-dot", "o-tracked-foreign-file")))
    found.append(case("output-over-inputs/untracked-fabric-in-its-site-directory", lambda w: _untracked(ctx, w)))
    for how in ("mount-point", "permissions"):
        found.append(case(f"partial-write/second-site-{how}", lambda w, h=how: _partial(ctx, w, h),
                          how == "permissions"))
    found.append(case("planted/links-and-fifo-in-the-output", lambda w: _planted(ctx, w), True))
    found.append(case("planted/site-directory-is-a-link", lambda w: _site_link(ctx, w)))
    return found


# --- forged stamps ------------------------------------------------------------------------------

def _package_dir(ctx: Context) -> Path:
    """The fabricgen package the executable runs (from its interpreter line)."""
    python = ctx.python
    first = ctx.fabricgen.read_bytes()[:200].split(b"\n")[0]
    if first.startswith(b"#!") and b"python" in first:
        python = Path(first[2:].decode().strip().split()[0])
    done = subprocess.run([str(python), "-c", "import fabricgen, os; print(os.path.dirname(fabricgen.__file__))"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise Skip("cannot find the fabricgen package to compute a forged stamp's code digest")
    return Path(done.stdout.strip())


def _code_digest(package: Path) -> str:
    """The retired stamp's `code`: SHA-256 over the relative path, length and bytes of every `.py`
    and `.j2` file of the package (`serialise/stamp.py` before the stamp was retired)."""
    found = []
    for path in package.rglob("*"):
        if "__pycache__" in path.parts or not path.is_file() or path.suffix not in (".py", ".j2"):
            continue
        found.append((path.relative_to(package).as_posix(), path))
    digest = hashlib.sha256()
    for rel, path in sorted(found):
        data = path.read_bytes()
        digest.update(f"{rel}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def _forge(ctx: Context, repo: Path, manifests: dict[str, list[str]] | None = None,
           extra: dict[str, bytes] | None = None) -> None:
    """Edit a route of hq and write a stamp that vouches for every file as it now is."""
    routes = repo / ROUTES
    routes.write_text(edit(routes.read_text(encoding="utf-8"), '"169.254.100.23"', FORGED_HOP))
    site = repo / "rendered" / "lab"
    files = {}
    for path in sorted(site.rglob("*")):
        if path.is_file() and path.name != ".fabricgen.json":
            files[path.relative_to(site).as_posix()] = {
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                "executable": bool(path.stat().st_mode & stat.S_IXUSR)}
    for rel, data in (extra or {}).items():  # an entry out of the tree, with its digest right
        files[rel] = {"sha256": hashlib.sha256(data).hexdigest(), "executable": False}
    kubernetes = {}
    for zone in ("hq", "ai", "edge", "dr"):
        listed = sorted(p.relative_to(site / zone).as_posix() for p in (site / zone).glob("stage-*/*.yaml")
                        if p.name != "kustomization.yaml")
        kubernetes[zone] = {"manifests": (manifests or {}).get(zone, listed), "objects": 21 if zone == "hq" else 5}
    fabric = (repo / LAB).read_bytes()
    doc = {"format": 1, "site": "lab", "fabric": {"source": LAB, "sha256": hashlib.sha256(fabric).hexdigest()},
           "code": _code_digest(_package_dir(ctx)), "warnings": 0, "files": files, "kubernetes": kubernetes}
    (site / ".fabricgen.json").write_text(json.dumps(doc, indent=1, ensure_ascii=True) + "\n")


def _attacked_repository(ctx: Context, work: Workdir, manifests: dict[str, list[str]] | None = None,
                         extra: dict[str, bytes] | None = None) -> Path:
    repo = fabric_repository(work, "repo", {LAB: sample(ctx, "lab")})
    _forge(ctx, repo, manifests, extra)
    git(work, repo, "add", "-A")
    git(work, repo, "commit", "-q", "-m", "a route and a stamp that vouches for it")
    return repo


def _stamp_check(ctx: Context, work: Workdir, ci: bool) -> None:
    repo = _attacked_repository(ctx, work)
    if ci:
        clone = work.path / "ci-clone"
        git(work, work.path, "clone", "-q", str(repo), str(clone))
        cache = work.path / "_ci-cache" / "fabricgen"
        for args in ((LAB, "--check"), ("--all", "--check")):
            result = work.fabricgen("render", *args, cwd=clone, env=work.env(cache=cache))
            work.check(result.code == 3, f"render {' '.join(args)} in a fresh clone says {result.code} for a forged "
                                         "route with a matching stamp, not 3 (out of date)")
            work.check("hq/stage-2/default-vpc-routes.yaml" in result.out + result.err,
                       f"render {' '.join(args)} does not name the edited file")
    else:
        result = work.fabricgen("render", LAB, "--check", cwd=repo)
        work.check(result.code == 3, f"render --check in the clone that rendered before says {result.code} for a "
                                     "forged route with a matching stamp, not 3")


def _stamp_render(ctx: Context, work: Workdir) -> None:
    repo = _attacked_repository(ctx, work)
    pristine = git(work, repo, "show", f"HEAD~1:{ROUTES}").stdout
    result = work.fabricgen("render", LAB, cwd=repo)
    work.check(result.code == 3, f"render of forged output exits {result.code}, not 3 (changed)")
    work.check((repo / ROUTES).read_text(encoding="utf-8") == pristine,
               "render kept the forged route: the file is not what the fabric renders")
    work.check(not (repo / "rendered" / "lab" / ".fabricgen.json").exists(), "render kept the committed stamp")


def _plugin_output(work: Workdir, checkout: Path, cache: Path) -> tuple[int, str, str]:
    env = work.env({"ARGOCD_APP_SOURCE_PATH": "sites/lab", "ARGOCD_ENV_ZONE": "hq"}, cache=cache)
    result = work.fabricgen("argocd-generate", cwd=checkout / "sites" / "lab", env=env)
    return result.code, result.out, result.err


def _stamp_plugin(ctx: Context, work: Workdir, variant: str) -> None:
    # ../../../../x/secret.yaml from the checkout's rendered/lab/hq/ is this file, outside the checkout
    work.write("x/secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: hostile-secret}\n")
    manifests, extra = None, None
    if variant == "no-manifests":
        manifests = {"hq": []}
    elif variant == "manifest-outside-the-repository":
        manifests = {"hq": ["../../../../x/secret.yaml"]}
        extra = {"hq/../../../../x/secret.yaml": (work.path / "x" / "secret.yaml").read_bytes()}
    repo = fabric_repository(work, "pristine", {LAB: sample(ctx, "lab")})
    code, expected, _err = _plugin_output(work, repo, work.path / "_cache-pristine" / "fabricgen")
    if not work.check(code == 0 and bool(expected), "setting up: the plugin does not print hq of the lab"):
        return
    shutil.rmtree(repo)
    repo = _attacked_repository(ctx, work, manifests, extra)
    checkout = work.path / "checkout"  # what the repo-server sends: the files, no .git
    shutil.copytree(repo, checkout, ignore=shutil.ignore_patterns(".git"))
    for attempt in ("cold", "cached"):
        code, printed, err = _plugin_output(work, checkout, work.cache)
        work.check(code == 0, f"the plugin ({attempt}) exits {code}: {err.strip()[-200:]}")
        work.check(FORGED_HOP not in printed, f"the plugin ({attempt}) prints the forged route")
        work.check("hostile-secret" not in printed, f"the plugin ({attempt}) prints a file outside the repository")
        work.check(printed == expected, f"the plugin ({attempt}) prints other objects than it does for the fabric "
                                        "without the forged stamp")


# --- -o over inputs ---------------------------------------------------------------------------------

def _over_inputs(ctx: Context, work: Workdir, name: str, cwd: str, args: tuple[str, ...]) -> None:
    repo = fabric_repository(work, "repo", {NAT: sample(ctx, "nat")}, render=name != "rendered-is-a-link-to-sites")
    if name == "o-tracked-foreign-file":
        (repo / "docs" / "nat").mkdir(parents=True)
        (repo / "docs" / "nat" / "README.md").write_text("the operators' notes, tracked\n")
        git(work, repo, "add", "-A")
        git(work, repo, "commit", "-q", "-m", "notes")
    if name == "rendered-is-a-link-to-sites":
        (repo / "rendered").symlink_to("sites")
    before = snapshot(repo)
    result = work.fabricgen("render", *args, cwd=repo / cwd)
    work.check(result.code == 1, f"render {' '.join(args)} (in {cwd}) exits {result.code}, not 1 (refused)")
    difference = tree_difference(before, snapshot(repo))
    work.check(not difference, f"render {' '.join(args)} changed the repository: {difference}")
    work.check((repo / NAT).is_file(), "the input fabric is gone")


def _untracked(ctx: Context, work: Workdir) -> None:
    """No git at all: the site directory `nat/` holds the fabric being rendered."""
    work.write("nat/fabric.yaml", sample(ctx, "nat"))
    before = snapshot(work.path / "nat")
    result = work.fabricgen("render", "nat/fabric.yaml", "-o", ".")
    work.check(result.code == 1, f"render nat/fabric.yaml -o . exits {result.code}, not 1")
    difference = tree_difference(before, snapshot(work.path / "nat"))
    work.check(not difference, f"render changed the fabric's directory: {difference}")


# --- several fabrics: all or none ---------------------------------------------------------------------

def _partial(ctx: Context, work: Workdir, how: str) -> None:
    """lab and nat rendered before; both fabrics change; nat's directory cannot be replaced."""
    lab, nat = sample(ctx, "lab"), sample(ctx, "nat")
    work.write("old/lab.yaml", lab)
    work.write("old/nat.yaml", nat)
    work.write("new/lab.yaml", edit(lab, "transitAddress: 169.254.100.23", "transitAddress: 169.254.100.24"))
    work.write("new/nat.yaml", edit(nat, "transitAddress: 169.254.100.23", "transitAddress: 169.254.100.24"))
    out = work.path / "out"
    first = work.fabricgen("render", "old/lab.yaml", "old/nat.yaml", "-o", "out", codes={3})
    if first.code != 3:
        return
    before = snapshot(out)
    if how == "mount-point":
        from hostile.interruption import in_mount_namespace

        if os.geteuid() != 0:
            raise Skip("a mount point needs root (in a private mount namespace)")
        steps = in_mount_namespace(work, [
            {"tmpfs": str(out / "nat"), "copy": True, "options": "size=4m,mode=0755"},
            {"run": [str(ctx.fabricgen), "render", "new/lab.yaml", "new/nat.yaml", "-o", "out"]},
            {"snapshot": str(out)}])
        code, err, after = steps[1]["code"], steps[1]["stderr"], steps[2]
    else:
        nat_dir = out / "nat"
        if os.geteuid() == 0:
            nobody_runs(ctx)
            nobody = NOBODY
            for path in [out, *out.rglob("*")]:
                if not path.is_relative_to(nat_dir):
                    os.chown(path, nobody, nobody, follow_symlinks=False)
            os.chmod(nat_dir, 0o555)
            cache = work.path / "_nobody-cache"
            cache.mkdir(mode=0o700)
            os.chown(cache, nobody, nobody)
            for path in (work.path / "new", *(work.path / "new").iterdir()):
                os.chown(path, nobody, nobody)
            run = work.fabricgen("render", "new/lab.yaml", "new/nat.yaml", "-o", "out", user=nobody,
                                 env=work.env({"HOME": str(cache)}, cache=cache / "fabricgen"))
        else:
            os.chmod(nat_dir, 0o555)
            run = work.fabricgen("render", "new/lab.yaml", "new/nat.yaml", "-o", "out")
        code, err, after = run.code, run.err, snapshot(out)
        os.chmod(nat_dir, 0o755)
    work.check(code == 1, f"render of two fabrics, the second not writable, exits {code}, not 1")
    lab_before = {p: e for p, e in before.items() if p.startswith("lab/")}
    lab_after = {p: e for p, e in after.items() if p.startswith("lab/")}
    if lab_before != lab_after:
        changed = sorted(p for p in set(lab_before) | set(lab_after) if lab_before.get(p) != lab_after.get(p)
                         and (lab_after.get(p) or lab_before.get(p, ("dir",)))[0] != "dir")
        unlisted = [p for p in changed if p not in err]
        work.check(not unlisted, f"lab was written although nat could not be, and not every written file is "
                                 f"listed: {unlisted[:5]}")
    nat_before = {p: e for p, e in before.items() if p.startswith("nat/")}
    nat_after = {p: e for p, e in after.items() if p.startswith("nat/")}
    difference = tree_difference(
        {p: e for p, e in nat_before.items() if p != "nat"}, {p: e for p, e in nat_after.items() if p != "nat"})
    work.check(not difference, f"the site that cannot be written changed: {difference}")
    leftovers = [p for p in after if p.startswith(".fabricgen")]
    work.check(not leftovers, f"staging left in the output root: {leftovers[:3]}")


# --- planted links and FIFOs --------------------------------------------------------------------------

def _planted(ctx: Context, work: Workdir) -> None:
    lab = sample(ctx, "lab")
    work.write("site/fabric.yaml", lab)
    first = work.fabricgen("render", "site/fabric.yaml", "-o", "out", codes={3})
    if first.code != 3:
        return
    expected = snapshot(work.path / "out")
    secret = work.write("secret/data.yaml", "the operator's file\n")
    (work.path / "secret" / "dir").mkdir()
    hq = work.path / "out" / "lab" / "hq"
    (hq / "stage-0" / "backbone.yaml").unlink()
    (hq / "stage-0" / "backbone.yaml").symlink_to(secret)  # a managed file replaced by a link out
    (hq / "evil.yaml").symlink_to(secret)
    (hq / "stage-9").symlink_to(work.path / "secret" / "dir")
    os.mkfifo(hq / "stage-1" / "fifo.yaml")
    result = work.fabricgen("render", "site/fabric.yaml", "-o", "out", timeout=30, codes={3})
    work.check(result.code == 3, f"render over planted links exits {result.code}, not 3")
    work.check(secret.read_text() == "the operator's file\n", "the file a planted link points at changed")
    work.check(not list((work.path / "secret" / "dir").iterdir()), "render wrote through a link to a directory")
    difference = tree_difference(expected, snapshot(work.path / "out"))
    work.check(not difference, f"the output is not the rendered tree after render: {difference}")


def _site_link(ctx: Context, work: Workdir) -> None:
    work.write("site/fabric.yaml", sample(ctx, "lab"))
    elsewhere = work.path / "elsewhere"
    elsewhere.mkdir()
    work.write("elsewhere/keep.txt", "not fabricgen's\n")
    (work.path / "out").mkdir()
    (work.path / "out" / "lab").symlink_to(elsewhere)
    before = snapshot(elsewhere)
    result = work.fabricgen("render", "site/fabric.yaml", "-o", "out")
    work.check(result.code == 1, f"render where the site directory is a link exits {result.code}, not 1")
    difference = tree_difference(before, snapshot(elsewhere))
    work.check(not difference, f"render wrote through the link: {difference}")
    work.check((work.path / "out" / "lab").is_symlink(), "render removed the link without saying")
