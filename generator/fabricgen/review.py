"""A pull-request view of what a fabric change does to the rendered output.

Objects are matched by zone, kind, namespace and name (not by position), text
files by path. The Markdown form has a summary with counts, one collapsible
section per output directory, a `#### Kind: namespace/name` header per changed
object with a fenced `diff`, and a size budget under GitHub's comment limit.
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from fabricgen.manifest_yaml import dump
from fabricgen.pipeline import Build

COMMENT_BUDGET = 60000  # GitHub rejects comments over 65,536 characters


@dataclass(frozen=True)
class Change:
    directory: str
    title: str  # "Kind: namespace/name" or "File: path"
    status: str  # added | modified | deleted
    diff: str


def _objects(build: Build | None) -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    if build is None:
        return found
    for directory in build.manifests:
        for obj in build.objects(directory):
            meta = obj.get("metadata", {})
            ns = meta.get("namespace")
            name = f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))
            found[(directory, f"{obj.get('kind')}: {name}")] = dump(obj)
    # Manifest files and kustomizations are compared object by object above.
    skip = {PurePosixPath(build.site, d, "kustomization.yaml") for d in build.manifests}
    skip |= {PurePosixPath(build.site, m.directory, m.filename) for ms in build.manifests.values() for m in ms}
    for path, out in build.files.items():
        if path in skip:
            continue
        parts = path.parts[1:]
        directory = parts[0] if len(parts) > 1 else ""
        found[(directory, f"File: {'/'.join(parts)}")] = out.text
    return found


def changes(base: Build | None, head: Build | None) -> list[Change]:
    old, new = _objects(base), _objects(head)
    out: list[Change] = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key, ""), new.get(key, "")
        if before == after:
            continue
        status = "added" if key not in old else "deleted" if key not in new else "modified"
        diff = "".join(
            difflib.unified_diff(before.splitlines(True), after.splitlines(True), "base", "head", n=3)
        )
        out.append(Change(key[0], key[1], status, diff))
    return out


def _counts(items: list[Change]) -> str:
    counts = {s: sum(c.status == s for c in items) for s in ("added", "modified", "deleted")}
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no changes"


IC_CONFIG = "ConfigMap: kube-system/ovn-ic-config"
IC_DB_SCRIPT = "ConfigMap: kube-system/fabricgen-ic-db-setup"


def cautions(items: list[Change], fabric: str = "FABRIC") -> list[str]:
    """Changes that disrupt traffic when applied, in words an operator acts on; `fabric` is the
    fabric file as the commands to run next name it."""
    notes: list[str] = []
    for change in items:
        where = change.directory or "."
        if change.title == IC_CONFIG and change.status != "added":
            notes.append(
                f"{where}: ovn-ic-config {change.status}: Kube-OVN 1.16.2 tears the zone's interconnection "
                "down and re-establishes it, with a new random transit address; once it is synced, run "
                f"`kubectl ko icsbctl show | fabricgen transit {shlex.quote(fabric)} --write` (in the cluster "
                "hosting the IC database), render and commit, or the "
                "other zones' routes to it point at a stale next hop"
            )
        if change.title == IC_DB_SCRIPT and change.status == "modified" and "vxlan_mode" in change.diff:
            notes.append(
                f"{where}: the IC database's vxlan_mode changes: this re-keys every existing transit switch "
                "and interrupts traffic between all zones until each AZ has re-synced"
            )
    return notes


def markdown(items: list[Change], title: str, fabric: str = "FABRIC") -> str:
    lines = [f"## {title}", "", f"Summary: {_counts(items)}", ""]
    if not items:
        return "\n".join(lines)
    lines += [f"> **Caution** {note}\n" for note in cautions(items, fabric)]
    directories = sorted({c.directory for c in items})
    lines += ["| directory | changes |", "| --- | --- |"]
    lines += [f"| `{d or '.'}` | {_counts([c for c in items if c.directory == d])} |" for d in directories]
    lines.append("")
    body: list[str] = []
    for directory in directories:
        section = [f"<details>\n<summary>{directory or '.'}</summary>\n"]
        for change in (c for c in items if c.directory == directory):
            section += [f"#### {change.title} ({change.status})", "```diff", change.diff.rstrip("\n"), "```", ""]
        section.append("</details>\n")
        body.extend(section)
    text = "\n".join(lines + body)
    if len(text) > COMMENT_BUDGET:
        text = "\n".join(lines) + (
            "\n_The full diff is longer than a pull-request comment allows; "
            "run `fabricgen diff` locally to see it._\n"
        )
    return text


def plain(items: list[Change], fabric: str = "FABRIC") -> Iterator[str]:
    for note in cautions(items, fabric):
        yield f"caution: {note}\n"
    for change in items:
        yield f"=== {change.directory or '.'}: {change.title} ({change.status})\n"
        yield change.diff
