"""The Argo CD plugin reads the fabric at the app path or fails, and works when Argo CD sends
only the app path (docs/delivery.md, "Argo CD"); every command that prints ends with 141 when its reader
goes away (`| head -c 0`), never with a traceback (docs/diagnostics.md, "Exit codes")."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

from hostile.harness import BROKEN_PIPE, Case, Context, Result, Workdir
from hostile.samples import fabric_repository, icsb_show
from hostile.targeted.common import case, sample

LAB = "sites/lab/fabric.yaml"


def cases(ctx: Context) -> list[Case]:
    found = []
    for kind in ("dangling-symlink", "directory", "fifo", "symlink-out-of-the-checkout", "symlink-to-dev-zero",
                 "unreadable-symlink-loop"):
        found.append(case(f"plugin-fabric/{kind}-at-the-app-path", lambda w, k=kind: _unusable(ctx, w, k),
                          kind in ("fifo", "symlink-out-of-the-checkout")))
    for sent in ("sites/lab", "sites"):
        found.append(case(f"plugin-fabric/only-{sent.replace('/', '-')}-sent", lambda w, s=sent: _sent(ctx, w, s),
                          sent == "sites/lab"))
    for name, env in (("fabric-absolute", {"ARGOCD_ENV_FABRIC": "/etc/passwd"}),
                      ("fabric-dot-dot", {"ARGOCD_ENV_FABRIC": "../../x/fabric.yaml"}),
                      ("fabric-dot-dot-inside", {"ARGOCD_ENV_FABRIC": "sites/../../x/fabric.yaml"}),
                      ("app-path-dot-dot", {"ARGOCD_APP_SOURCE_PATH": "sites/../../x"}),
                      ("unknown-zone", {"ARGOCD_ENV_ZONE": "nowhere"}),
                      ("no-zone-of-four", {"ARGOCD_ENV_ZONE": ""}),
                      ("conflicting-zone", {"ARGOCD_ENV_ZONE": "hq", "PARAM_ZONE": "ai"}),
                      ("typo", {"ARGOCD_ENV_ZOEN": "hq"}),
                      ("zone-with-a-line-break", {"ARGOCD_ENV_ZONE": "hq\nai"}),
                      ("zone-path", {"ARGOCD_ENV_ZONE": "../hq"})):
        found.append(case(f"plugin-settings/{name}", lambda w, e=env: _bad_setting(ctx, w, e)))
    for name in ("argocd-generate", "argocd-generate-cached", "validate-json", "render-json",
                 "graph", "graph-dot", "schema", "rules", "rules-markdown", "krm", "transit-json", "diff-markdown",
                 "diff-json"):
        found.append(case(f"broken-pipe/{name}", lambda w, n=name: _broken_pipe(ctx, w, n),
                          name in ("argocd-generate", "validate-json", "krm")))
    return found


def _checkout(ctx: Context, work: Workdir) -> Path:
    """What the repo-server unpacks: the repository's files without .git."""
    checkout = work.path / "checkout"
    (checkout / "sites" / "lab").mkdir(parents=True)
    (checkout / LAB).write_text(sample(ctx, "lab"))
    return checkout


def _plugin(work: Workdir, cwd: Path, app: str, **env: str) -> Result:
    return work.fabricgen("argocd-generate", cwd=cwd, timeout=30,
                          env=work.env({"ARGOCD_APP_SOURCE_PATH": app, "ARGOCD_ENV_ZONE": "hq", **env}))


def _unusable(ctx: Context, work: Workdir, kind: str) -> None:
    checkout = _checkout(ctx, work)
    app = checkout / "sites" / "lab" / "hq-app"
    app.mkdir()
    fabric = app / "fabric.yaml"
    if kind == "dangling-symlink":
        fabric.symlink_to("no-such-file.yaml")
    elif kind == "directory":
        fabric.mkdir()
    elif kind == "fifo":
        os.mkfifo(fabric)
    elif kind == "symlink-out-of-the-checkout":
        outside = work.write("outside/fabric.yaml", sample(ctx, "lab"))  # a valid fabric: reading it renders
        fabric.symlink_to(outside)
    elif kind == "symlink-to-dev-zero":
        fabric.symlink_to("/dev/zero")
    else:
        fabric.symlink_to("fabric.yaml")
    result = _plugin(work, app, "sites/lab/hq-app")
    work.check(result.code == 2, f"the plugin with a {kind} fabric.yaml at the app path exits {result.code}, not 2")
    work.check(not result.stdout.strip(), "the plugin printed objects (the parent site's fabric?)")


def _sent(ctx: Context, work: Workdir, sent: str) -> None:
    checkout = _checkout(ctx, work)
    full = _plugin(work, checkout / "sites" / "lab", "sites/lab")
    if not work.check(full.code == 0 and bool(full.stdout), f"setting up: the plugin on the checkout: {full.brief()}"):
        return
    workdir = work.path / "_cmp_server" / str(uuid.uuid4())
    shutil.copytree(checkout / sent, workdir)
    app = workdir / Path("sites/lab").relative_to(sent)
    only = _plugin(work, app, "sites/lab", FABRICGEN_CACHE_DIR=str(work.path / "_cache-sent" / "fabricgen"))
    work.check(only.code == 0, f"the plugin sent only {sent} exits {only.code}, not 0")
    work.check(only.stdout == full.stdout, f"the plugin sent only {sent} prints other objects than with the whole "
                                           "repository")


def _bad_setting(ctx: Context, work: Workdir, settings: dict[str, str]) -> None:
    checkout = _checkout(ctx, work)
    work.write("x/fabric.yaml", sample(ctx, "lab"))
    env = dict(settings)
    result = _plugin(work, checkout / "sites" / "lab", env.pop("ARGOCD_APP_SOURCE_PATH", "sites/lab"), **env)
    work.check(result.code == 2, f"the plugin with {settings} exits {result.code}, not 2 (bad settings)")
    work.check(not result.stdout.strip(), "the plugin printed objects with bad settings (exit 0 with output, or "
                                          "output with a failure)")


def _closed_stdout(work: Workdir, argv: list[str], cwd: Path, env: dict[str, str] | None = None,
                   stdin: bytes | None = None) -> Result:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: `| head -c 0`
    try:
        return work.run([str(work.ctx.fabricgen), *argv], cwd=cwd, env=env, stdin=stdin, stdout_fd=write, timeout=60)
    finally:
        os.close(write)


def _broken_pipe(ctx: Context, work: Workdir, name: str) -> None:
    lab = sample(ctx, "lab")
    invalid = lab.replace("transitAddress: 169.254.100.23", "transitAddress: 169.254.100.71")
    work.write("site/fabric.yaml", lab)
    work.write("bad/fabric.yaml", invalid)
    work.write("capture.txt", icsb_show([("hq", "169.254.100.70/24")]))
    stdin = None
    env = None
    cwd = work.path
    if name.startswith("argocd-generate"):
        checkout = _checkout(ctx, work)
        cwd = checkout / "sites" / "lab"
        env = work.env({"ARGOCD_APP_SOURCE_PATH": "sites/lab", "ARGOCD_ENV_ZONE": "hq"})
        argv = ["argocd-generate"]
        if name.endswith("cached"):
            warm = work.fabricgen("argocd-generate", cwd=cwd, env=env)
            work.check(warm.code == 0, f"setting up: the plugin: {warm.brief()}")
    elif name.startswith("diff"):
        repo = fabric_repository(work, "repo", {LAB: lab}, render=False)
        (repo / LAB).write_text(lab.replace("169.254.100.23", "169.254.100.24"))
        cwd = repo
        argv = ["diff", LAB, "--no-verify", "--format", name.split("-")[1]]
    else:
        argv = {
            "validate-json": ["validate", "bad/fabric.yaml", "--format", "json"],
            "render-json": ["render", "bad/fabric.yaml", "--format", "json", "-o", "out"],
            "graph": ["graph", "site/fabric.yaml"],
            "graph-dot": ["graph", "site/fabric.yaml", "--format", "dot"],
            "schema": ["schema"],
            "rules": ["rules"],
            "rules-markdown": ["rules", "--markdown"],
            "krm": ["krm"],
            "transit-json": ["transit", "site/fabric.yaml", "capture.txt", "--format", "json"],
        }[name]
        if name == "krm":
            stdin = json.dumps({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [],
                                "functionConfig": {"apiVersion": "fabricgen.io/v1alpha1", "kind": "FabricGenerator",
                                                   "metadata": {"name": "x"},
                                                   "spec": {"path": "site/fabric.yaml", "zone": "hq"}}}).encode()
    result = _closed_stdout(work, argv, cwd, env, stdin)
    work.expect_documented(result, argv[0], {BROKEN_PIPE})
