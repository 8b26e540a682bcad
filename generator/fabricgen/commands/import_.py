"""`fabricgen import FABRIC --cluster NAME=FILE... --show FILE` (or `--from DIR`, a status
capture): a fabric.yaml from a running fabric.

Reads the captures, maps them to a fabric and validates it (`fabricgen.adopt.adoption`), writes
it as a new file with the schema modeline (never over an existing one: `output.new_file`), and
proves the round trip. Exit 0: the fabric is valid and renders every live object it manages exactly;
3: valid, but the round trip is not exact; 1: the input was refused (nothing written), or the
new fabric has errors (written, each error located in it).
"""

from __future__ import annotations

import re
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


def run(*, fabric: Path, clusters: Sequence[str], show: Path | None, ic_nb: Path | None, site: str | None,
        fmt: str, capture: Path | None = None, ic_raft: Path | None = None) -> int:
    from fabricgen.adopt.adoption import adopt
    from fabricgen.output.new_file import exists, write_new
    from fabricgen.output.ownership import output_tree

    if capture is not None and (clusters or show is not None or ic_nb is not None or ic_raft is not None):
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
    adoption = adopt(fabric, name, clusters=groups, show=show, ic_nb=ic_nb, capture=capture, ic_raft=ic_raft)
    write_new(fabric, adoption.text)
    return adoption.finish(fmt)
