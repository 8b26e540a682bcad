"""Family `fuzz`: mutants of the sample fabrics (`hostile.mutate`), each rendered by a real
`fabricgen render` process.

A mutant holds when:
- render ends with a documented code (0, 1 or 3 here: the command line is right, so 2 would
  be a usage error for a fabric's content), never 4, never a traceback, never a hang;
- refused (1): stderr is located one-line diagnostics and the summary, and the output
  directory is exactly as it was (the previous output of the sample, or absent);
- accepted (0, 3): every warning is a located line, the output passes its real readers
  (`hostile.readers`), a second render into a fresh directory from another working
  directory, with another PYTHONHASHSEED, umask and locale, writes the same bytes and modes,
  no staging directory is left, and (some mutants) `render --check` then says current (0);
- one mutant in four also runs one more command on the same file and must agree with render:
  `validate --format json` (1 exactly when render refused; JSON on stdout), `validate --format
  github` (annotations), `graph` (0 or 1 alike), the Argo CD plugin for one zone (refused alike;
  accepted: exactly the objects `kubectl kustomize` builds from the rendered zone) or the KRM
  function with the fabric inline (refused alike, with error results).
"""

from __future__ import annotations

import json
import random
import re
from functools import partial
from pathlib import Path

import yaml

from hostile import diagnostics
from hostile.harness import Case, Context, Workdir, snapshot, tree_difference
from hostile.mutate import mutant
from hostile.readers import Readers
from hostile.samples import SITE_FILE, Baselines, Sample, copy_tree, samples

FAMILY = "fuzz"
GITHUB = re.compile(r"^::(error|warning) file=[^,:]*,line=\d+,col=\d+,title=fabricgen FG\d{3}::[^\r\n]*$")


def cases(ctx: Context, count: int) -> list[Case]:
    pool = samples(ctx.repo)
    baselines = Baselines(ctx)
    readers = Readers(ctx, FAMILY)
    return [Case(FAMILY, f"mutant-{number:05d}", partial(_run, ctx, pool, baselines, readers, number), quick=True)
            for number in range(count)]


def _decoded(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _run(ctx: Context, pool: list[Sample], baselines: Baselines, readers: Readers, number: int,
         work: Workdir) -> str | None:
    rng = random.Random(f"{ctx.seed}/{number}/case")
    sample = pool[rng.randrange(len(pool))]
    made = mutant(sample.text, ctx.seed, number)
    work.write(SITE_FILE, made.data)
    work.write("MUTATION.txt", f"sample {sample.rel}, seed {ctx.seed}, mutant {number}\n"
               + "".join(f"- {note}\n" for note in made.notes))
    baseline = baselines.get(sample)
    out = work.path / "out"
    if rng.random() < 0.75:
        copy_tree(baseline.out, out)  # the previous output of the sample is there
    existed = out.exists()
    before = snapshot(out)
    text = _decoded(made.data)

    rendered = work.fabricgen("render", SITE_FILE, "-o", "out", timeout=90,
                              env=work.env({"PYTHONHASHSEED": "1"}), umask=0o022)
    if rendered.timed_out or rendered.code not in (0, 1, 3):
        if rendered.code == 2:
            work.fail("render: exit 2 (a usage error) for a right command line")
        return None
    if rendered.code == 1:
        for problem in diagnostics.problems(rendered.err, SITE_FILE, text):
            work.fail(f"render refused: {problem}")
        difference = tree_difference(before, snapshot(out))
        work.check(not difference, f"render refused the fabric but changed the output directory: {difference}")
        work.check(existed or not out.exists(), "render refused the fabric but created the output directory")
        outcome = "refused"
    else:
        outcome = "accepted"
        for problem in diagnostics.problems(rendered.err, SITE_FILE, text, summary=False, warnings_only=True):
            work.fail(f"render accepted: {problem}")
        _accepted(ctx, work, readers, rng, out, before)
    if rng.random() < 0.25:
        _one_more_command(work, rng, rendered.code, text, made.data, readers, baseline.site)
    return outcome


def _accepted(ctx: Context, work: Workdir, readers: Readers, rng: random.Random, out: Path,
              before: dict[str, tuple[str, str, int]]) -> None:
    elsewhere = work.path / "elsewhere" / "deeper"
    elsewhere.mkdir(parents=True)
    again = work.fabricgen("render", f"../../{SITE_FILE}", "-o", "../../out2", cwd=elsewhere, timeout=90,
                           env=work.env({"PYTHONHASHSEED": "4242", "LC_ALL": "C", "LANG": "C"}), umask=0o077,
                           codes={0, 3})
    if again.code not in (0, 3):
        work.fail(f"a second render of the accepted fabric did not succeed: {again.brief()}")
        return
    sites = sorted(p.name for p in (work.path / "out2").iterdir()) if (work.path / "out2").is_dir() else []
    if not work.check(len(sites) == 1, f"a render into an empty directory wrote {sites}, not one site directory"):
        return
    site = sites[0]
    first, second = snapshot(out / site), snapshot(work.path / "out2" / site)
    difference = tree_difference(first, second)
    work.check(not difference, "not deterministic: another working directory, PYTHONHASHSEED, umask and locale "
                               f"render other bytes or modes: {difference}")
    leftovers = [p.name for p in out.iterdir() if p.name.startswith(".fabricgen")]
    work.check(not leftovers, f"left in the output root after render: {leftovers}")
    others = {p: e for p, e in before.items() if p.split("/")[0] != site}
    still = {p: e for p, e in snapshot(out).items() if p.split("/")[0] != site}
    difference = tree_difference(others, still)
    work.check(not difference, f"render changed another site's directory: {difference}")
    for problem in readers.read_tree(out / site):
        work.fail(f"a reader refuses the output: {problem}")
    if rng.random() < 0.3:
        current = work.fabricgen("render", SITE_FILE, "-o", "out", "--check", codes={0})
        work.check(current.code == 0, f"render --check right after render is not 0: {current.brief()}")


def _zones(directory: Path) -> list[str]:
    if not directory.is_dir():
        return []
    return sorted(p.name for p in directory.iterdir()
                  if p.is_dir() and not p.name.startswith("_") and (p / "kustomization.yaml").exists())


def _one_more_command(work: Workdir, rng: random.Random, render_code: int, text: str | None, data: bytes,
                      readers: Readers, baseline_site: str) -> None:
    invalid = render_code == 1
    which = rng.choice(["validate-json", "validate-github", "graph", "plugin", "plugin", "krm"])
    if which == "validate-json":
        result = work.fabricgen("validate", SITE_FILE, "--format", "json")
        work.check((result.code == 1) == invalid, f"validate --format json exits {result.code}, render {render_code}")
        try:
            report = json.loads(result.out)
            work.check(isinstance(report, dict) and "diagnostics" in report, "validate --format json: no diagnostics")
        except ValueError:
            work.fail(f"validate --format json: stdout is not JSON: {result.out[:200]!r}")
    elif which == "validate-github":
        result = work.fabricgen("validate", SITE_FILE, "--format", "github")
        work.check((result.code == 1) == invalid, f"validate --format github exits {result.code}, render {render_code}")
        for line in (result.out + result.err).splitlines():
            if line.startswith("::"):
                work.check(bool(GITHUB.match(line)), f"not a workflow annotation: {line[:200]!r}")
    elif which == "graph":
        result = work.fabricgen("graph", SITE_FILE)
        work.check((result.code == 1) == invalid, f"graph exits {result.code}, render {render_code}")
        work.check(invalid or bool(result.stdout.strip()), "graph of an accepted fabric printed nothing")
    else:
        site_dir = work.path / "out2"
        zones = _zones(next(iter(site_dir.iterdir()))) if not invalid and site_dir.is_dir() else []
        zone = rng.choice(zones) if zones else (rng.choice(_zones(work.path / "out" / baseline_site) or ["hq"]))
        if which == "plugin":
            _plugin(work, invalid, zone, zones, readers)
        else:
            _krm(work, invalid, zone, text, zones)


def _plugin(work: Workdir, invalid: bool, zone: str, zones: list[str], readers: Readers) -> None:
    env = work.env({"ARGOCD_APP_SOURCE_PATH": "site", "ARGOCD_ENV_ZONE": zone})
    result = work.fabricgen("argocd-generate", cwd=work.path / "site", env=env)
    if invalid:
        # 1 for the invalid fabric; 2 where the zone asked for is not in it (the mutant removed it)
        work.check(result.code in (1, 2), f"the plugin exits {result.code} on a fabric render refused")
        work.check(len(result.err.splitlines()) <= 11, "the plugin printed more than ten error lines")
        return
    if not zones:
        work.check(result.code in (1, 2), f"the plugin exits {result.code} for a fabric without zones")
        return
    if not work.check(result.code == 0 and bool(result.stdout.strip()),
                      f"the plugin did not print zone {zone} of an accepted fabric: {result.brief()}"):
        return
    site = next(iter((work.path / "out2").iterdir()))
    verdict, built = readers.kustomize(site / zone)
    if verdict is None and built:
        try:
            printed, expected = list(yaml.safe_load_all(result.stdout)), list(yaml.safe_load_all(built))
        except yaml.YAMLError as exc:
            work.fail(f"the plugin's output is not YAML: {exc}")
            return
        work.check(printed == expected, f"the plugin prints other objects for zone {zone} than kubectl kustomize "
                                        f"builds from the rendered zone ({len(printed)} vs {len(expected)})")


def _krm(work: Workdir, invalid: bool, zone: str, text: str | None, zones: list[str]) -> None:
    spec: dict[str, str] = {"zone": zone}
    if text is not None:
        spec["inline"] = text
    else:
        spec["path"] = SITE_FILE
    resource_list = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [],
                     "functionConfig": {"apiVersion": "fabricgen.io/v1alpha1", "kind": "FabricGenerator",
                                        "metadata": {"name": "hostile"}, "spec": spec}}
    result = work.fabricgen("krm", stdin=json.dumps(resource_list).encode())
    if invalid:
        work.check(result.code in (1, 2), f"the KRM function exits {result.code} on a fabric render refused")
        try:
            doc = yaml.safe_load(result.stdout)
            severities = [r.get("severity") for r in (doc or {}).get("results", [])]
            work.check("error" in severities, "the KRM function refused the fabric without an error result")
        except yaml.YAMLError as exc:
            work.fail(f"the KRM function's output is not YAML: {exc}")
        return
    if zones:
        work.check(result.code == 0, f"the KRM function refused zone {zone} of an accepted fabric: {result.brief()}")
