"""`fabricgen init [DIR]`: a fabric repository that passes its own pre-commit hook on the first commit.

What it writes is `fabricgen.scaffold.repository`'s; this checks the arguments and says
what was written.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fabricgen import __version__

if TYPE_CHECKING:
    from fabricgen.scaffold import repository

_SITE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def run(*, directory: Path, site: str, hook_repo: str | None, hook_rev: str | None) -> int:
    from fabricgen.scaffold import repository

    if not _SITE.fullmatch(site):
        raise repository.InitUsageError(f"--site {site!r} is not a valid name: use lower-case letters, digits "
                                        "and '-', starting and ending with a letter or digit")
    if (hook_repo is None) != (hook_rev is None):
        raise repository.InitUsageError("give --hook-repo and --hook-rev together")
    chosen = (repository.installed_pin() if hook_repo is None or hook_rev is None
              else repository.pin(hook_repo, hook_rev))
    repository.create(directory, site, chosen)
    _report(directory, site, chosen)
    return 0


def _report(directory: Path, site: str, chosen: repository.Pin) -> None:
    where = f"{chosen.repo} at {chosen.rev}" if chosen.rev else "the fabricgen on PATH (no commit on record)"
    sys.stderr.write(
        f"fabricgen: wrote a fabric repository for site {site} in {directory}\n"
        f"  pre-commit hooks: fabricgen {__version__} from {where}\n"
        "  next: cd into it, then: git init && pre-commit install && git add -A && git commit -m 'Fabric'\n")
