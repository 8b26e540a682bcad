"""Input that is no fabric: refused by every command alike, located, quickly and in bounded
memory, never an internal error (docs/diagnostics.md, docs/delivery.md "kustomize and kpt",
docs/review-and-proof.md "diff").

- a fabric that is not UTF-8: FG000 from validate, render, the plugin, the KRM function,
  graph, transit and diff;
- explicit tags (`name: !!float lab`, `!!int`, `!!bool`, `!!omap`, `transitAddress: !!null ...`,
  `!custom`, `!<...>`): FG001 from every command;
- nesting past 64 levels (also 100,000), aliases expanding past 100,000 nodes, a file over
  4 MiB, a FIFO, a device, a directory: FG000/FG001 in seconds of CPU;
- KRM ResourceLists nested 800 and 5,000 levels, over 1 MiB, 4 MB, not a ResourceList: refused
  with a message (exit 1 or 2) in bounded CPU and memory;
- `diff --base` with every revision that is no commit (exit 2, nothing written by git), a
  gitlink, a link or a directory where the fabric was.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from hostile import diagnostics
from hostile.harness import Case, Context, Result, Workdir
from hostile.samples import fabric_repository, git, icsb_show
from hostile.targeted.common import case, edit, sample

LAB = "sites/lab/fabric.yaml"
CPU_LIMIT = 10.0  # seconds of CPU a refusal may take (the issue measured 11 s to refuse 2,000 levels)
RSS_LIMIT_MIB = 400

TAGS = {
    "float-name": ("  name: lab ", "  name: !!float lab "),
    "int-name": ("  name: lab ", "  name: !!int lab "),
    "bool-name": ("  name: lab ", "  name: !!bool lab "),
    "str-name": ("  name: lab ", "  name: !!str lab "),
    "omap-interconnection": ("interconnection:\n", "interconnection: !!omap\n"),
    "null-transit-address": ("transitAddress: 169.254.100.71", "transitAddress: !!null 169.254.100.71"),
    "custom-tag": ("transitAddress: 169.254.100.71", "transitAddress: !custom 169.254.100.71"),
    "verbatim-tag": ("transitAddress: 169.254.100.71", "transitAddress: !<tag:yaml.org,2002:str> 169.254.100.71"),
    "non-specific-tag": ("transitAddress: 169.254.100.71", "transitAddress: ! 169.254.100.71"),
    "python-object": ("  name: lab ", "  name: !!python/object/apply:os.system ['true'] "),
    "binary": ("transitAddress: 169.254.100.71", "transitAddress: !!binary MTY5LjI1NC4xMDAuNzE="),
}
COMMANDS = ("validate", "render", "argocd-generate", "krm-inline", "krm-path", "graph", "transit", "diff")


def cases(ctx: Context) -> list[Case]:
    found = []
    for command in COMMANDS:
        found.append(case(f"not-utf-8/{command}", lambda w, c=command: _refused_everywhere(ctx, w, c, "not-utf-8"),
                          command in ("validate", "argocd-generate")))
    for tag in TAGS:
        for command in COMMANDS:
            found.append(case(f"tag/{tag}/{command}", lambda w, t=tag, c=command: _refused_everywhere(ctx, w, c, t),
                              tag in ("float-name", "null-transit-address") and command in ("validate", "krm-inline")))
    for name in ("nesting-65", "nesting-2000", "nesting-100000", "block-nesting-200", "alias-bomb",
                 "alias-recursive", "over-4-mib", "exactly-4-mib", "fifo", "dev-zero", "directory", "empty",
                 "only-a-comment", "a-list", "two-documents", "utf-16", "nul-byte"):
        found.append(case(f"no-fabric/{name}", lambda w, n=name: _no_fabric(ctx, w, n),
                          name in ("nesting-2000", "alias-bomb", "fifo")))
    for name in ("nested-800", "nested-5000", "over-1-mib", "4-mb", "not-a-resource-list", "empty", "binary",
                 "items-not-a-list", "function-config-missing", "alias-bomb"):
        found.append(case(f"krm-input/{name}", lambda w, n=name: _krm_input(ctx, w, n), name in ("nested-800", "4-mb")))
    for base in ("HEAD:../../etc/passwd", "@{-1}", "HEAD@{5}", "HEAD^{tree}", "HEAD:sites/lab/fabric.yaml",
                 "HEAD~1..HEAD", "--output=OUTSIDE", "-p", "", "no-such-branch", "HEAD~99", "0" * 40, ":/no such"):
        found.append(case(f"diff-base/bad-{base or 'empty'}", lambda w, b=base: _bad_base(ctx, w, b),
                          base in ("HEAD:../../etc/passwd", "--output=OUTSIDE")))
    for base in ("HEAD~1", "HEAD^", "HEAD@{1}", "HEAD@{1.year.ago}", ":/version 0"):
        found.append(case(f"diff-base/good-{base}", lambda w, b=base: _good_base(ctx, w, b)))
    for where in ("gitlink", "symlink", "directory", "absent"):
        found.append(case(f"diff-base/{where}-where-the-fabric-was", lambda w, k=where: _odd_base(ctx, w, k),
                          where == "gitlink"))
    return found


# --- the same refusal from every command --------------------------------------------------------

def _broken(ctx: Context, kind: str) -> bytes:
    lab = sample(ctx, "lab")
    if kind == "not-utf-8":
        return lab.encode().replace(b"# ", b"# caf\xe9 \xff", 1)
    old, new = TAGS[kind]
    return edit(lab, old, new).encode()


def _refused_everywhere(ctx: Context, work: Workdir, command: str, kind: str) -> None:
    data = _broken(ctx, kind)
    code = "FG000" if kind == "not-utf-8" else "FG001"
    text = None if kind == "not-utf-8" else data.decode()
    name = LAB
    repo = work.path / "repo"
    fabric = repo / LAB
    if command == "diff":
        fabric_repository(work, "repo", {LAB: sample(ctx, "lab")}, render=False)
    else:
        fabric.parent.mkdir(parents=True)
    fabric.write_bytes(data)
    if command in ("validate", "render", "graph"):
        result = work.fabricgen(command, LAB, *(("-o", "out") if command == "render" else ()), cwd=repo)
        _located(work, result, name, text, code)
        if command == "render":
            work.check(not (repo / "out").exists(), "render of a refused fabric created the output directory")
    elif command == "argocd-generate":
        env = work.env({"ARGOCD_APP_SOURCE_PATH": "sites/lab", "ARGOCD_ENV_ZONE": "hq"})
        result = work.fabricgen(command, cwd=repo / "sites" / "lab", env=env)
        work.check(result.code == 1, f"the plugin exits {result.code}, not 1 (an invalid fabric)")
        first = result.err.splitlines()[:1]
        work.check(bool(first) and not diagnostics.problems(first[0] + "\n", name, text, summary=False)
                   and f"[{code}]" in first[0], f"the plugin's first line is not a located {code}: {first}")
        work.check(not result.stdout.strip(), "the plugin printed objects for an invalid fabric")
    elif command.startswith("krm"):
        spec: dict[str, str] = {"zone": "hq"}
        if command == "krm-inline" and text is not None:
            spec["inline"] = text
        else:
            spec["path"] = LAB
        resource_list = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [],
                         "functionConfig": {"apiVersion": "fabricgen.io/v1alpha1", "kind": "FabricGenerator",
                                            "metadata": {"name": "x"}, "spec": spec}}
        result = work.fabricgen("krm", cwd=repo, stdin=json.dumps(resource_list).encode())
        work.check(result.code == 1, f"the KRM function exits {result.code}, not 1 (an invalid fabric)")
        work.check(f"[{code}]" in result.out, f"the KRM function's results hold no {code}")
    elif command == "transit":
        (repo / "capture.txt").write_text(icsb_show([("hq", "169.254.100.71/24")]))
        before = fabric.read_bytes()
        result = work.fabricgen("transit", LAB, "capture.txt", "--write", cwd=repo)
        _located(work, result, name, text, code)
        work.check(fabric.read_bytes() == before, "transit --write changed a fabric it cannot read")
    elif command == "diff":
        result = work.fabricgen("diff", LAB, "--no-verify", cwd=repo)
        work.check(result.code == 1, f"diff of an invalid head exits {result.code}, not 1")
        work.check(f"[{code}]" in result.out + result.err, f"diff does not report {code}")


def _located(work: Workdir, result: Result, name: str, text: str | None, code: str) -> None:
    if not work.check(result.code == 1, f"exit {result.code}, not 1 (refused): {result.err.strip()[-200:]}"):
        return
    for problem in diagnostics.problems(result.err, name, text):
        work.fail(problem)
    work.check(f"[{code}]" in result.err, f"no {code} in: {result.err.strip()[:200]!r}")


# --- no fabric at all ------------------------------------------------------------------------------

def _no_fabric(ctx: Context, work: Workdir, name: str) -> None:
    lab = sample(ctx, "lab")
    path = work.path / "site" / "fabric.yaml"
    path.parent.mkdir()
    code = "FG001"
    exit_code = 1
    text: str | None = None
    if name.startswith("nesting-"):
        depth = int(name.split("-")[1])
        text = edit(lab, "transitAddress: 169.254.100.71", "transitAddress: " + "[" * depth + "]" * depth)
    elif name == "block-nesting-200":
        text = edit(lab, "    transitAddress: 169.254.100.71\n", "    transitAddress:\n"
                    + "".join(" " * (6 + 2 * i) + "a:\n" for i in range(200)) + " " * 408 + "x: 1\n")
    elif name == "alias-bomb":
        layers = ["&l0 [" + ", ".join(["lol"] * 10) + "]"]
        layers += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 9)]
        text = edit(lab, "transitAddress: 169.254.100.71", "transitAddress: [" + ", ".join(layers) + "]")
    elif name == "alias-recursive":  # refused, whichever check says so
        text, code = edit(lab, "transitAddress: 169.254.100.71", "transitAddress: &r [*r]"), ""
    elif name == "over-4-mib":
        text, code = lab + "#" * (4 * 1024 * 1024 - len(lab.encode()) + 1) + "\n", "FG000"
    elif name == "exactly-4-mib":  # the limit is inclusive: a valid fabric of 4 MiB is read
        text, code, exit_code = lab + "#" * (4 * 1024 * 1024 - len(lab.encode()) - 1) + "\n", "", 0
    elif name == "fifo":
        os.mkfifo(path)
        code = "FG000"
    elif name == "dev-zero":
        path.symlink_to("/dev/zero")
        code = "FG000"
    elif name == "directory":
        path.mkdir()
        code = "FG000"
    elif name == "empty":
        text, code = "", ""
    elif name == "only-a-comment":
        text, code = "# nothing here\n", ""
    elif name == "a-list":
        text, code = "- a\n- b\n", ""
    elif name == "two-documents":
        text = lab + "---\n" + lab
    elif name == "utf-16":
        path.write_bytes(lab.encode("utf-16"))
        code = "FG000"
    elif name == "nul-byte":
        text, code = lab.replace("# ", "# \x00", 1), ""
    if text is not None:
        path.write_text(text, encoding="utf-8")
    result = work.fabricgen("validate", "site/fabric.yaml", timeout=60)
    if not work.check(result.code == exit_code, f"validate exits {result.code}, not {exit_code}"):
        return
    if exit_code == 0:
        _bounded(work, result, "validate")
        return
    for problem in diagnostics.problems(result.err, "site/fabric.yaml", text):
        work.fail(problem)
    if code:
        work.check(f"[{code}]" in result.err, f"no {code}: {result.err.strip()[:200]!r}")
    _bounded(work, result, "validate")
    rendered = work.fabricgen("render", "site/fabric.yaml", "-o", "out", timeout=60)
    work.check(rendered.code == 1 and not (work.path / "out").exists(), f"render: {rendered.brief()}, or it wrote")


def _bounded(work: Workdir, result: Result, what: str) -> None:
    work.check(result.cpu < CPU_LIMIT, f"{what} took {result.cpu:.1f} s of CPU to refuse (limit {CPU_LIMIT} s)")
    work.check(result.max_rss_kib < RSS_LIMIT_MIB * 1024,
               f"{what} took {result.max_rss_kib // 1024} MiB of memory to refuse (limit {RSS_LIMIT_MIB} MiB)")


# --- the KRM function's input ------------------------------------------------------------------------

def _resource_list(items: str) -> str:
    return ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n" + items
            + "functionConfig:\n  apiVersion: fabricgen.io/v1alpha1\n  kind: FabricGenerator\n"
              "  metadata: {name: x}\n  spec: {path: sites/lab/fabric.yaml, zone: hq}\n")


def _krm_input(ctx: Context, work: Workdir, name: str) -> None:
    work.write(LAB, sample(ctx, "lab"))
    item = "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: "
    if name.startswith("nested-"):
        depth = int(name.split("-")[1])
        stdin = _resource_list("items:\n" + item + "[" * depth + "]" * depth + "\n").encode()
    elif name == "over-1-mib":
        stdin = _resource_list("items: []\n").encode() + b"#" * (1024 * 1024) + b"\n"
    elif name == "4-mb":
        many = "".join(f"- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: c{i}}}\n  data: {{k: v{i}}}\n"
                       for i in range(60000))
        stdin = _resource_list("items:\n" + many).encode()
    elif name == "not-a-resource-list":
        stdin = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
    elif name == "empty":
        stdin = b""
    elif name == "binary":
        stdin = bytes(range(256)) * 64
    elif name == "items-not-a-list":
        stdin = _resource_list("items: {a: b}\n").encode()
    elif name == "function-config-missing":
        stdin = b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"
    else:
        layers = ["&l0 [" + ", ".join(["lol"] * 10) + "]"]
        layers += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 9)]
        stdin = _resource_list("items:\n" + item + "[" + ", ".join(layers) + "]\n").encode()
    result = work.fabricgen("krm", stdin=stdin, timeout=120)
    _bounded(work, result, "the KRM function")
    if name == "alias-bomb":  # items pass through: not expanded on the way
        work.check(len(result.stdout) < 20 * len(stdin) + 200_000,
                   f"the KRM function expanded an alias bomb to {len(result.stdout)} bytes")
        return
    work.check(result.code in (1, 2), f"the KRM function exits {result.code}, not 1 or 2 (refused)")
    work.check(bool(result.err.strip()), "the KRM function refused without a message on stderr")


# --- diff --base ------------------------------------------------------------------------------------------

def _two_commits(ctx: Context, work: Workdir) -> Path:
    lab = sample(ctx, "lab")
    repo = fabric_repository(work, "repo", {LAB: lab}, render=False)
    git(work, repo, "commit", "-q", "--allow-empty", "-m", "version 0")
    (repo / LAB).write_text(lab.replace("172.30.10.", "172.30.11."))
    git(work, repo, "commit", "-q", "-am", "version 1")
    (repo / LAB).write_text(lab.replace("172.30.10.", "172.30.12."))
    return repo


def _bad_base(ctx: Context, work: Workdir, base: str) -> None:
    repo = _two_commits(ctx, work)
    outside = work.path / "injected"
    base = base.replace("OUTSIDE", str(outside))
    before = git(work, repo, "status", "--porcelain").stdout
    result = work.fabricgen("diff", LAB, f"--base={base}", "--no-verify", cwd=repo)
    work.check(result.code == 2, f"diff --base={base!r} exits {result.code}, not 2 (a usage error)")
    work.check(bool(result.err.strip()), "no message")
    work.check(not outside.exists(), "git wrote the file a revision named")
    work.check(git(work, repo, "status", "--porcelain").stdout == before, "the repository changed")


def _good_base(ctx: Context, work: Workdir, base: str) -> None:
    repo = _two_commits(ctx, work)
    result = work.fabricgen("diff", LAB, f"--base={base}", "--no-verify", cwd=repo)
    work.check(result.code in (0, 3), f"diff --base={base!r} exits {result.code}, not 0 or 3")


def _odd_base(ctx: Context, work: Workdir, where: str) -> None:
    lab = sample(ctx, "lab")
    repo = work.path / "repo"
    repo.mkdir()
    git(work, repo, "init", "-q")
    (repo / "sites").mkdir()
    if where == "gitlink":
        inner = fabric_repository(work, "inner", {"fabric.yaml": lab}, render=False)
        git(work, repo, "submodule", "add", "-q", str(inner), LAB)
    elif where == "symlink":
        (repo / "sites" / "lab").mkdir()
        (repo / LAB).symlink_to("/etc/passwd")
    elif where == "directory":
        (repo / LAB).mkdir(parents=True)
        (repo / LAB / "x").write_text("x\n")
    else:
        (repo / "README").write_text("no fabric yet\n")
    git(work, repo, "add", "-A")
    git(work, repo, "commit", "-q", "-m", f"a {where} where the fabric will be")
    if where != "absent":
        git(work, repo, "rm", "-q", "-r", "--cached", LAB)
        subprocess.run(["rm", "-rf", str(repo / LAB)], check=True)
    (repo / LAB).parent.mkdir(parents=True, exist_ok=True)
    (repo / LAB).write_text(lab)
    git(work, repo, "add", "-A")
    git(work, repo, "commit", "-q", "-m", "the fabric")
    result = work.fabricgen("diff", LAB, "--base", "HEAD~1", "--no-verify", cwd=repo)
    if where == "absent":
        work.check(result.code == 3, f"diff against a revision without the fabric exits {result.code}, not 3 "
                                     "(everything added)")
    else:
        work.check(result.code == 2, f"diff against a {where} where the fabric was exits {result.code}, not 2")
