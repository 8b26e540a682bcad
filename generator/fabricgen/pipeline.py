"""load -> validate -> plan -> render: a fabric file in, the output tree (in memory) out.

Nothing here writes to disk; `fabricgen.output.emit` does. `render` builds the whole
output tree (the CLI); `render_kubernetes` builds only its Kubernetes objects (the Argo CD
plugin and the KRM function print one zone's), running the same renderers less those whose
output is text only, and ordering their objects in the same function, so every path
produces the same objects.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from fabricgen.diagnostics import Diagnostic
from fabricgen.errors import InvalidFabricError
from fabricgen.model import Fabric
from fabricgen.plan import apply_order
from fabricgen.plan.zones import Plan, build_plan
from fabricgen.render import RENDERERS, TEXT_ONLY, delivery, kustomization
from fabricgen.render.artifacts import Artifact, KubeObject, Manifest, TextFile
from fabricgen.render.header import generated as generated  # for output.ownership
from fabricgen.render.header import header
from fabricgen.serialise import render_record
from fabricgen.serialise.manifest_yaml import dump_all
from fabricgen.source import provenance
from fabricgen.source.reader import Source, parse, read

_SAFE_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class OutputFile:
    text: str
    executable: bool = False


@dataclass(frozen=True)
class KubernetesBuild:
    """A site's Kubernetes objects: what `render_kubernetes` builds, and part of every `Build`."""

    plan: Plan
    manifests: dict[str, tuple[Manifest, ...]]  # per Kubernetes directory, in apply order

    @property
    def site(self) -> str:
        return self.plan.site

    def objects(self, directory: str) -> list[KubeObject]:
        """The Kubernetes objects of one directory (a zone), in apply order."""
        return [obj for m in self.manifests.get(directory, ()) for obj in m.objects]

    def objects_within(self, cluster: str) -> list[KubeObject]:
        """Every Kubernetes object rendered for a cluster (a zone or a consumer cluster), wherever
        inside its directory it is (its stages' subdirectories too)."""
        return [obj for directory in self.manifests
                if directory == cluster or directory.startswith(cluster + "/") for obj in self.objects(directory)]


@dataclass(frozen=True)
class Origin:
    """What a build was rendered from, as its render record names it (`serialise.render_record`)."""

    fabric_sha256: str  # of the fabric file's bytes
    warnings: int  # how many warnings the fabric has


@dataclass(frozen=True)
class Build(KubernetesBuild):
    """The whole output tree of a site: its files, the Kubernetes ones among them."""

    files: dict[PurePosixPath, OutputFile]  # relative to the output root, under <site>/
    warnings: tuple[Diagnostic, ...] = field(default=())
    origin: Origin | None = None  # None: no render record (a build not read from a fabric file)


def check(source: Source | None, diagnostics: list[Diagnostic]) -> tuple[Fabric, Source, list[Diagnostic]]:
    from fabricgen.validation.validator import validate

    if source is None:
        raise InvalidFabricError(diagnostics)
    fabric, found = validate(source)
    if source.fast and (fabric is None or found):
        # something to report: judged again from the round-trip reading, whose values carry
        # their positions and are what every message was written against
        source = source.located()
        fabric, found = validate(source)
    if fabric is None or any(d.is_error for d in found):
        raise InvalidFabricError(found)
    return fabric, source, found


def load(path: Path) -> tuple[Fabric, Source, list[Diagnostic]]:
    """Read and validate; raises InvalidFabricError with every problem found."""
    return check(*read(path))


def load_all(paths: Iterable[Path]) -> tuple[list[tuple[Fabric, Source]], list[Diagnostic]]:
    """Load several fabrics; every problem of every fabric is collected, and two fabrics
    that claim one site (one output directory) are refused (FG004)."""
    loaded: list[tuple[Fabric, Source]] = []
    found: list[Diagnostic] = []
    owners: dict[str, str] = {}
    for path in paths:
        try:
            fabric, source, warnings = load(path)
        except InvalidFabricError as exc:
            found.extend(exc.diagnostics)
            continue
        found.extend(warnings)
        site = fabric.metadata.name
        if site in owners:
            found.append(source.diagnostic(
                ("metadata", "name"),
                f"site {site!r} is also rendered by {owners[site]}; both would own "
                f"rendered/{site}/; give each fabric its own metadata.name", "FG004", value=True))
            continue
        owners[site] = source.name
        loaded.append((fabric, source))
    return loaded, found


def load_text(text: str, name: str) -> tuple[Fabric, Source, list[Diagnostic]]:
    return check(*parse(text, name))


def safe_path(path: PurePosixPath) -> PurePosixPath:
    """Renderer paths are relative and made of plain names; anything else is a bug."""
    if path.is_absolute() or not path.parts or not all(_SAFE_PART.fullmatch(p) for p in path.parts):
        raise ValueError(f"renderer produced an unsafe path: {path}")
    return path


def staged(manifest: Manifest) -> list[Manifest]:
    """A renderer's file split by apply stage into `stage-<n>/<filename>`, each object
    carrying its stage as its Argo CD sync wave (`fabricgen.plan.apply_order`)."""
    by_stage: dict[int, list[KubeObject]] = {}
    for obj in manifest.objects:
        stage = apply_order.stage_of(obj)
        by_stage.setdefault(stage, []).append(apply_order.with_wave(obj, stage))
    return [Manifest(manifest.directory, f"{apply_order.stage_name(stage)}/{manifest.filename}", tuple(objs))
            for stage, objs in sorted(by_stage.items())]


def stage_number(manifest: Manifest) -> int:
    return int(manifest.objects[0]["metadata"]["annotations"][apply_order.WAVE])


def check_order(directory: str, manifests: tuple[Manifest, ...]) -> None:
    """Every dependency an object has in its directory sits in a strictly lower stage, or in
    its own stage when it is of a kind both engines apply first there (a Namespace)."""
    objects = [o for m in manifests for o in m.objects]
    stage = {apply_order.identity(o): int(o["metadata"]["annotations"][apply_order.WAVE]) for o in objects}
    strict = apply_order.dependencies(objects, same_stage=False)
    for obj, needs in apply_order.dependencies(objects).items():
        for need in needs:
            if stage[need] > stage[obj] or (stage[need] == stage[obj] and need in strict[obj]):
                raise ValueError(f"{directory}: {obj} is in stage {stage[obj]} but needs {need} "
                                 f"in stage {stage[need]}")


def in_apply_order(renderer_manifests: Iterable[Manifest]) -> dict[str, tuple[Manifest, ...]]:
    """The renderers' manifests per directory, split by stage and in apply order (checked)."""
    by_dir: dict[str, list[Manifest]] = {}
    for manifest in renderer_manifests:
        by_dir.setdefault(manifest.directory, []).extend(staged(manifest))
    manifests: dict[str, tuple[Manifest, ...]] = {}
    def later(m: Manifest) -> bool:
        """A file of Namespaces goes first in its stage, as both engines apply them first."""
        return not all(o["kind"] in apply_order.FIRST_IN_STAGE for o in m.objects)

    for directory, items in by_dir.items():
        ordered = tuple(sorted(items, key=lambda m: (stage_number(m), later(m), m.filename)))
        manifests[directory] = ordered
        check_order(directory, ordered)
    return manifests


def assemble(plan: Plan, artifacts: Iterable[Artifact]) -> Build:
    site = PurePosixPath(plan.site)
    top = header(plan)
    files: dict[PurePosixPath, OutputFile] = {}

    def put(rel: PurePosixPath, out: OutputFile) -> None:
        target = site / safe_path(rel)
        if target in files:
            raise ValueError(f"two renderers produced {target}")
        files[target] = out

    renderer_manifests: list[Manifest] = []
    for artifact in artifacts:
        if isinstance(artifact, Manifest):
            renderer_manifests.append(artifact)
        elif isinstance(artifact, TextFile):
            # A file with an interpreter line is meant to be run: make it executable.
            put(artifact.path, OutputFile(artifact.text, artifact.executable or artifact.text.startswith("#!")))
    manifests = in_apply_order(renderer_manifests)
    for directory, ordered in manifests.items():
        stages: dict[str, list[str]] = {}
        for m in ordered:
            stage, name = PurePosixPath(m.filename).parts
            stages.setdefault(stage, []).append(name)
            put(PurePosixPath(directory, m.filename), OutputFile(top + "---\n" + dump_all(m.objects)))
        for stage, names in stages.items():
            put(PurePosixPath(directory, stage, "kustomization.yaml"), OutputFile(kustomization.text(names, top)))
        put(PurePosixPath(directory, "kustomization.yaml"), OutputFile(kustomization.text(list(stages), top)))
    for text_file in delivery.render(plan, manifests):
        put(text_file.path, OutputFile(text_file.text))
    return Build(plan=plan, files=dict(sorted(files.items())), manifests=manifests)


def render(fabric: Fabric, source_name: str) -> Build:
    plan = build_plan(fabric, source_name)
    artifacts: list[Artifact] = []
    for name, renderer in RENDERERS.items():
        output = renderer(plan)
        if name in TEXT_ONLY and any(isinstance(a, Manifest) for a in output):
            raise ValueError(f"renderer {name} produced Kubernetes objects but is listed in TEXT_ONLY, "
                             "which render_kubernetes leaves out")
        artifacts.extend(output)
    return assemble(plan, artifacts)


def render_kubernetes(fabric: Fabric, source_name: str, *, zone: str | None = None) -> KubernetesBuild:
    """The Kubernetes objects `render` builds, and only those: the renderers whose output is
    text only (`TEXT_ONLY`: host scripts, INI and netplan files) do not run, and no file is
    serialised. A renderer that yields both builds its objects as it does for `render`.

    With `zone` (a zone of the fabric), the renderers see a plan holding that zone alone,
    everything else of the plan unchanged: a zone's plan already carries what it needs of the
    others (its routes to them), so its objects are the ones the whole plan gives, without
    building every other zone's (on a fabric of many zones, most of the work)."""
    plan = build_plan(fabric, source_name)
    if zone is not None:
        plan = replace(plan, zones=tuple(z for z in plan.zones if z.name == zone))
    renderers = [renderer for name, renderer in RENDERERS.items() if name not in TEXT_ONLY]
    return KubernetesBuild(plan, in_apply_order(a for renderer in renderers for a in renderer(plan)
                                                if isinstance(a, Manifest)))


def provenance_name(source: Source, output_root: Path | None = None) -> str:
    """The fabric's name in generated files: see `fabricgen.source.provenance`."""
    return source.name if source.path is None else provenance.source_name(source.path, output_root)


def build(path: Path, output_root: Path | None = None) -> Build:
    fabric, source, warnings = load(path)
    result = render(fabric, provenance_name(source, output_root))
    return replace(result, warnings=tuple(warnings))


def build_all(paths: Iterable[Path], output: Path | None = None) -> tuple[list[Build], list[Diagnostic]]:
    """Validate and render every fabric, each with its origin; all problems of all fabrics are collected."""
    loaded, found = load_all(paths)
    return [replace(render(fabric, provenance_name(source, output)),
                    origin=Origin(render_record.sha256(source.text.encode()),
                                  sum(d.file == source.name and not d.is_error for d in found)))
            for fabric, source in loaded], found

