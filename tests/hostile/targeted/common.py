"""What the targeted cases share: the sample fabrics' text and exact edits of it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hostile.harness import Case, Context, Failed, Workdir

FAMILY = "targeted"


def sample(ctx: Context, site: str) -> str:
    return (ctx.repo / "sites" / site / "fabric.yaml").read_text(encoding="utf-8")


def edit(text: str, old: str, new: str, count: int = 1) -> str:
    """Replace `old`, which must occur exactly `count` times, by `new`."""
    if text.count(old) != count:
        raise Failed([f"setting up: {old!r} occurs {text.count(old)} times in the sample, not {count}"])
    return text.replace(old, new)


def case(name: str, run: Callable[[Workdir], str | None], quick: bool = False) -> Case:
    return Case(FAMILY, name, run, quick)


def unchanged(work: Workdir, path: Path, before: bytes, what: str) -> None:
    work.check(path.read_bytes() == before, f"{what}: the file changed")
