"""One `fabricgen import`: the captures read (`inputs`), mapped to a fabric (`mapping`), written
out as a document with the schema modeline (`document`) and validated, each problem located in
the new file; then, once the caller has written it, the round trip proven (`proof`) and told
(`summary`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fabricgen import exit_codes, report
from fabricgen.adopt import document, inputs, mapping, proof, summary
from fabricgen.diagnostics import Diagnostic
from fabricgen.model import Fabric
from fabricgen.source.provenance import repository_root
from fabricgen.source.reader import display_name, parse
from fabricgen.validation.validator import validate

SCHEMA = Path("schemas") / "fabric.schema.json"


def schema_path(fabric: Path) -> tuple[str, Path]:
    """The modeline's path to schemas/fabric.schema.json at the top of the fabric's repository,
    relative to the fabric; and that file. Outside a repository the top is the directory that
    holds `sites/` for a fabric at `sites/<site>/fabric.yaml`, else the fabric's own directory."""
    directory = fabric.resolve().parent
    root = repository_root(directory)
    if root is None:
        root = directory.parent.parent if directory.parent.name == "sites" else directory
    schema = root / SCHEMA
    return Path(os.path.relpath(schema, directory)).as_posix(), schema


@dataclass(frozen=True)
class Adoption:
    """A fabric made from a running one, not yet written: `text` goes to `fabric`."""

    fabric: Path
    shown: str  # the fabric's name as messages give it
    imported: mapping.Imported
    text: str
    modeline: str
    schema: Path
    model: Fabric | None
    diagnostics: tuple[Diagnostic, ...]

    @property
    def valid(self) -> bool:
        return self.model is not None and not any(d.is_error for d in self.diagnostics)

    def finish(self, fmt: str) -> int:
        """Prove the written fabric's round trip, say what became of everything, and give the exit
        code: 0 exact, 3 (CHANGED) valid but not exact, 1 (INVALID) the fabric has errors."""
        result = proof.prove(self.imported, self.model, self.shown, valid=self.valid)
        if fmt == "json":
            sys.stdout.write(summary.as_json(result, self.shown, written=True, valid=self.valid,
                                             notes=self.imported.notes, diagnostics=list(self.diagnostics)))
        else:
            sys.stdout.write(summary.text(result, self.shown, written=True))
            sys.stdout.flush()
            if self.diagnostics:
                sys.stderr.write(report.format_diagnostics(list(self.diagnostics), "text"))
        if not self.schema.exists():
            sys.stderr.write(f"fabricgen: the modeline names {self.modeline}, which does not exist yet: write it "
                             f"with `fabricgen schema -o {self.schema}`\n")
        if not self.valid:
            sys.stderr.write(f"fabricgen: wrote {self.shown}, which has {report.summary(list(self.diagnostics))}: "
                             "the running fabric has them too; fix them in the file, then `fabricgen validate` and "
                             "`fabricgen render`\n")
            return exit_codes.INVALID
        sys.stderr.write(f"fabricgen: wrote {self.shown}; "
                         + ("the round trip is exact: `fabricgen render` it and commit both\n" if result.exact else
                            "the round trip is not exact: review the entries above before you render and apply it\n"))
        return 0 if result.exact else exit_codes.CHANGED


def adopt(fabric: Path, site: str, *, clusters: Sequence[tuple[str, list[Path]]], show: Path | None,
          ic_nb: Path | None, capture: Path | None, ic_raft: Path | None = None) -> Adoption:
    """Read the captures (a status capture directory, or per cluster its files and the show),
    map them to the fabric of `site` and validate it."""
    if capture is not None:
        live = inputs.from_status_capture(capture)
    else:
        assert show is not None
        live = inputs.read_kubectl(list(clusters), show, ic_nb, ic_raft)
    imported = mapping.build(live, site)
    modeline, schema = schema_path(fabric)
    sources = [f"cluster {c.name} ({', '.join(c.sources)})" for c in live.clusters] if capture is None else \
        [f"fabricgen status --capture {capture.as_posix()} (zones {', '.join(c.name for c in live.clusters)})"]
    sources.append(f"ovn-ic-sbctl show ({live.show_name})")
    if live.ic_nb_name is not None:
        sources.append(f"IC northbound options ({live.ic_nb_name})")
    if live.ic_raft_name is not None:
        sources.append(f"IC northbound raft status ({live.ic_raft_name})")
    shown = display_name(fabric)
    text = document.text(imported, modeline, sources, shown)
    source, _parse_problems = parse(text, shown)
    assert source is not None  # document.text read it back
    model, diagnostics = validate(source)
    return Adoption(fabric, shown, imported, text, modeline, schema, model, tuple(diagnostics))
