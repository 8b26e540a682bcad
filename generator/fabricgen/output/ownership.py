"""What `render` may replace or remove under `<output>/<site>/`: checked before anything is touched.

A site directory is fabricgen's: `render` brings it to exactly the rendered tree, so whatever
else is there goes. That is right for its own stale output (a removed zone) and for stray
files nobody keeps (an editor's backup), and wrong for anything that is someone's input. So
a run that would replace or remove

- a directory holding any fabric it was given (`cd sites && fabricgen render nat/fabric.yaml
  -o .` names `./nat/`, the fabric's own directory, as the output of site `nat`), or
- a file or link that git tracks and that fabricgen did not write (it lacks fabricgen's
  header, `fabricgen.render.header.generated`)

is refused, each such path named, and nothing is written. Files fabricgen wrote are known by
their header, not by a list kept beside them: a list in the output could be written by anyone.
The same header tells `import` (`output_tree`) that a new fabric would land in an output tree,
where the next render would remove it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath

from fabricgen.pipeline import generated

LEGACY_STAMP = ".fabricgen.json"  # the stamp older fabricgen versions wrote at the top of a site
_LEGACY_STAMP_START = b'{\n "format": 1,\n "site": '


def _fabricgens(rel: PurePosixPath, data: bytes) -> bool:
    if len(rel.parts) == 2 and rel.name == LEGACY_STAMP:
        return data.startswith(_LEGACY_STAMP_START)
    return generated(data)


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def tracked(root: Path, site: str) -> set[PurePosixPath]:
    """The paths under `root/site/` that git tracks (relative to `root`); empty outside a
    repository or without git."""
    try:
        done = subprocess.run(["git", "-c", "core.quotepath=off", "ls-files", "-z", "--cached", "--", f"{site}/"],
                              cwd=root, capture_output=True, check=False)
    except OSError:
        return set()
    if done.returncode != 0:
        return set()
    return {PurePosixPath(p) for p in os.fsdecode(done.stdout).split("\0") if p}


def problems(root: Path, site: str, files: Mapping[PurePosixPath, bytes], foreign: Iterable[PurePosixPath],
             touched: Iterable[PurePosixPath], inputs: Sequence[Path]) -> list[str]:
    """Why `root/site/` must not be written: `files` are its regular files (relative to `root`),
    `foreign` its other entries, `touched` what the run would replace or remove, `inputs` the
    fabrics of the run."""
    out: list[str] = []
    site_dir = root / site
    real = os.path.realpath(site_dir)
    for fabric in inputs:
        if _inside(os.path.realpath(fabric), real):
            out.append(f"{site_dir} holds the fabric {fabric}, and render replaces that whole directory "
                       f"with site {site}'s output; choose an output directory (-o) that holds no fabric, "
                       "such as the default, rendered")
    candidates = [rel for rel in touched if rel not in files or not _fabricgens(rel, files[rel])]
    if candidates and site_dir.is_dir():
        known = tracked(root, site)
        for rel in sorted(set(candidates) & known):
            kind = "link or special file" if rel in set(foreign) else "file"
            out.append(f"{root / rel}: git tracks this {kind}, fabricgen did not write it, and render "
                       "would replace or remove it; move it out of the output directory, or choose "
                       "another output directory (-o)")
    return out


def output_tree(fabric: Path, *, limit: int = 400) -> Path | None:
    """The fabricgen output directory the new fabric would land in, if any: its directory or the
    one above holds files fabricgen wrote (its header), up to two levels down (a site's zones,
    the sites of an output root). `render` brings such a directory to exactly what it renders,
    so it would remove the fabric as stale output. At most `limit` files are looked at."""
    seen = 0
    for top in (fabric.parent, fabric.parent.parent):
        level = [top]
        for _depth in range(3):
            below: list[Path] = []
            for folder in level:
                try:
                    children = sorted(folder.iterdir())
                except OSError:
                    continue
                for path in children:
                    if path.is_symlink():
                        continue
                    if path.is_dir():
                        below.append(path)
                        continue
                    seen += 1
                    if seen > limit:
                        return None
                    try:
                        with path.open("rb") as handle:
                            if generated(handle.read(2048)):
                                return top
                    except OSError:
                        continue
            level = below
    return None
