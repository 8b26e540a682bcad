"""The files of a new fabric repository, which passes its own pre-commit hook on the first commit.

A commented sample fabric, the schema its modeline points at, a pre-commit
configuration pinned to this fabricgen, CI examples, `.gitignore`, a README of the
workflow, and the rendered output of the sample (the normal render pipeline, so it is
byte for byte what the hook renders). The templates are package data in
`fabricgen/scaffold/templates/`. Nothing is overwritten: when any file to write exists,
every one of them is named and nothing is written.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from fabricgen import __version__, exit_codes
from fabricgen.errors import FabricgenError, OutputError

_REV = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$")
_LINE_BREAK = re.compile(r"[\r\n\x00]")

# scaffold template -> path in the new repository ({site} is the site name)
TEMPLATES = (
    ("fabric.yaml.j2", "sites/{site}/fabric.yaml"),
    ("pre-commit-config.yaml.j2", ".pre-commit-config.yaml"),
    ("github-actions.yaml.j2", "ci/github-actions.yaml"),
    ("gitlab-ci.yml.j2", "ci/gitlab-ci.yml"),
    ("gitignore.j2", ".gitignore"),
    ("README.md.j2", "README.md"),
)
SCHEMA_PATH = "schemas/fabric.schema.json"


class InitUsageError(FabricgenError):
    exit_code = exit_codes.USAGE


@dataclass(frozen=True)
class Pin:
    """Where the pre-commit hooks get fabricgen: a git repository and commit, or none known."""

    repo: str | None
    rev: str | None
    requirement: str  # what `pip install` takes to install the same fabricgen; "" when none is known


def installed_pin() -> Pin:
    """The git URL and commit this fabricgen was installed from, as pip records them (PEP 610
    direct_url.json); a fabricgen installed from a directory or a wheel has none."""
    from importlib import metadata

    # No commit to pin: the CI files leave FABRICGEN empty, for the user to set. Never a bare
    # package name: anyone who publishes a package of that name would run code in their pipelines.
    fallback = Pin(None, None, "")
    try:
        text = metadata.distribution("fabricgen").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return fallback
    try:
        record = json.loads(text) if text else {}
    except ValueError:
        return fallback
    vcs = record.get("vcs_info") if isinstance(record, dict) else None
    url = record.get("url") if isinstance(record, dict) else None
    if not (isinstance(vcs, dict) and vcs.get("vcs") == "git" and isinstance(url, str)
            and isinstance(vcs.get("commit_id"), str)):
        return fallback
    return pin(url, vcs["commit_id"])


def pin(repo: str, rev: str) -> Pin:
    if _LINE_BREAK.search(repo) or not repo.strip() or repo.startswith("-"):
        raise InitUsageError(f"--hook-repo {repo!r} is not a repository URL")
    if not _REV.fullmatch(rev):
        raise InitUsageError(f"--hook-rev {rev!r} is not a git revision; give a full commit id")
    return Pin(repo, rev, f"fabricgen @ git+{repo}@{rev}")


def _yamlstr(value: object) -> str:
    """One YAML double-quoted scalar (JSON string syntax is a subset of it): no value starts a key."""
    return json.dumps(str(value))


def files(site: str, chosen: Pin) -> dict[str, str]:
    from fabricgen.model.schema import schema_text
    from fabricgen.render.templating import strict_environment

    env = strict_environment("fabricgen.scaffold")
    env.filters["yamlstr"] = _yamlstr
    context = {"site": site, "version": __version__, "fabric_path": f"sites/{site}/fabric.yaml",
               "hook_repo": chosen.repo, "hook_rev": chosen.rev, "install": chosen.requirement}
    files = {target.format(site=site): env.get_template(name).render(**context) for name, target in TEMPLATES}
    files[SCHEMA_PATH] = schema_text()
    return files


def create(directory: Path, site: str, chosen: Pin) -> None:
    """Write the repository for `site` into `directory`, or nothing at all."""
    from fabricgen.output import emit
    from fabricgen.pipeline import load_text, render

    scaffold = files(site, chosen)
    fabric_path = f"sites/{site}/fabric.yaml"
    fabric, _source, _warnings = load_text(scaffold[fabric_path], fabric_path)
    build = render(fabric, fabric_path)

    targets = [directory / rel for rel in scaffold] + [directory / "rendered" / site]
    taken = [t for t in targets if t.exists() or t.is_symlink()]
    if taken:
        listed = "".join(f"\n  {t}" for t in taken)
        raise OutputError(f"init writes only new files, and these exist (nothing written):{listed}")
    written: list[Path] = []
    try:
        for rel, text in scaffold.items():
            path = directory / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("x", encoding="utf-8") as out:  # "x": never replace a file
                out.write(text)
            written.append(path)
        emit.write(directory / "rendered", build)
    except (OSError, FabricgenError) as exc:
        for path in written:
            path.unlink(missing_ok=True)
        if isinstance(exc, FabricgenError):
            raise
        raise OutputError(f"cannot write {exc.filename or directory}: {exc.strerror or exc}") from None

