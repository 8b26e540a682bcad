"""`fabricgen import FABRIC --cluster NAME=FILE... --show FILE` (or `--from DIR`, a status
capture): a fabric.yaml from a running fabric.

Reads the captures (`fabricgen.adopt.inputs`), maps them to a fabric (`adopt.mapping`), writes
it as a new file with the schema modeline (never over an existing one: `output.new_file`),
validates it (every problem located in the new file) and proves the round trip
(`adopt.proof`). Exit 0: the fabric is valid and renders every live object it manages exactly;
3: valid, but the round trip is not exact; 1: the input was refused (nothing written), or the
new fabric has errors (written, each error located in it).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from fabricgen import exit_codes
from fabricgen.errors import FabricgenError

_SITE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
SCHEMA = Path("schemas") / "fabric.schema.json"


class ImportUsageError(FabricgenError):
    exit_code = exit_codes.USAGE


def clusters_of(pairs: Sequence[str]) -> list[tuple[str, list[Path]]]:
    """`NAME=FILE` arguments, grouped by NAME in the order given."""
    grouped: dict[str, list[Path]] = {}
    for pair in pairs:
        name, sep, file = pair.partition("=")
        if not sep or not name.strip() or not file:
            raise ImportUsageError(f"--cluster {pair!r}: write NAME=FILE, e.g. --cluster hq=hq.yaml")
        grouped.setdefault(name, []).append(Path(file))
    return list(grouped.items())


def site_of(fabric: Path, site: str | None) -> str:
    chosen = site if site is not None else fabric.resolve().parent.name
    if not _SITE.fullmatch(chosen):
        if site is None:
            raise ImportUsageError(f"the directory of {fabric} ({chosen!r}) is not a site name; give --site NAME "
                                   "(lower-case letters, digits and '-')")
        raise ImportUsageError(f"--site {site!r} is not a valid name: use lower-case letters, digits and '-', "
                               "starting and ending with a letter or digit")
    return chosen


def schema_path(fabric: Path) -> tuple[str, Path]:
    """The modeline's path to schemas/fabric.schema.json at the top of the fabric's repository,
    relative to the fabric; and that file. Outside a repository the top is the directory that
    holds `sites/` for a fabric at `sites/<site>/fabric.yaml`, else the fabric's own directory."""
    from fabricgen.source.provenance import repository_root

    directory = fabric.resolve().parent
    root = repository_root(directory)
    if root is None:
        root = directory.parent.parent if directory.parent.name == "sites" else directory
    schema = root / SCHEMA
    return Path(os.path.relpath(schema, directory)).as_posix(), schema


def run(*, fabric: Path, clusters: Sequence[str], show: Path | None, ic_nb: Path | None, site: str | None,
        fmt: str, capture: Path | None = None) -> int:
    from fabricgen import report
    from fabricgen.adopt import document, inputs, mapping, proof, summary
    from fabricgen.output.new_file import exists, write_new
    from fabricgen.output.ownership import output_tree
    from fabricgen.source.reader import display_name, parse
    from fabricgen.validation.validator import validate

    if capture is not None and (clusters or show is not None or ic_nb is not None):
        raise ImportUsageError("give --from DIR, or --cluster and --show, not both")
    if capture is None and (not clusters or show is None):
        raise ImportUsageError("give each cluster's captures (--cluster NAME=FILE) and --show FILE, or --from DIR "
                               "(a capture of `fabricgen status --capture`)")
    groups = clusters_of(clusters)
    name = site_of(fabric, site)
    if exists(fabric):
        raise FabricgenError(f"{fabric} exists; import writes only a new file: give another path (nothing written)")
    tree = output_tree(fabric)  # the next render would remove it there
    if tree is not None:
        raise FabricgenError(f"{fabric} would be inside {tree}, which holds fabricgen's rendered output: the next "
                             "render removes what it did not write there; give a path in the fabrics' own directory, "
                             "e.g. sites/<site>/fabric.yaml (nothing written)")
    if capture is not None:
        live = inputs.from_status_capture(capture)
    else:
        assert show is not None
        live = inputs.read_kubectl(groups, show, ic_nb)
    imported = mapping.build(live, name)
    modeline, schema = schema_path(fabric)
    sources = [f"cluster {c.name} ({', '.join(c.sources)})" for c in live.clusters] if capture is None else \
        [f"fabricgen status --capture {capture.as_posix()} (zones {', '.join(c.name for c in live.clusters)})"]
    sources.append(f"ovn-ic-sbctl show ({live.show_name})")
    if live.ic_nb_name is not None:
        sources.append(f"IC northbound options ({live.ic_nb_name})")
    shown = display_name(fabric)
    text = document.text(imported, modeline, sources, shown)
    source, _parse_problems = parse(text, shown)
    assert source is not None  # document.text read it back
    model, diagnostics = validate(source)
    valid = model is not None and not any(d.is_error for d in diagnostics)
    write_new(fabric, text)
    result = proof.prove(imported, model, shown, valid=valid)
    if fmt == "json":
        sys.stdout.write(summary.as_json(result, shown, written=True, valid=valid, notes=imported.notes,
                                         diagnostics=diagnostics))
    else:
        sys.stdout.write(summary.text(result, shown, written=True))
        sys.stdout.flush()
        if diagnostics:
            sys.stderr.write(report.format_diagnostics(diagnostics, "text"))
    if not schema.exists():
        sys.stderr.write(f"fabricgen: the modeline names {modeline}, which does not exist yet: write it with "
                         f"`fabricgen schema -o {schema}`\n")
    if not valid:
        sys.stderr.write(f"fabricgen: wrote {shown}, which has {report.summary(diagnostics)}: the running fabric "
                         "has them too; fix them in the file, then `fabricgen validate` and `fabricgen render`\n")
        return exit_codes.INVALID
    sys.stderr.write(f"fabricgen: wrote {shown}; "
                     + ("the round trip is exact: `fabricgen render` it and commit both\n" if result.exact else
                        "the round trip is not exact: review the entries above before you render and apply it\n"))
    return 0 if result.exact else exit_codes.CHANGED
