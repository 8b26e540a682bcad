"""The fast reading of a plain fabric (ruamel.yaml's C parser, `source.reader._fast`): the same
values, and positions from the round-trip reading, made once however many messages want one."""

from __future__ import annotations

from typing import Any

import pytest

from fabricgen.pipeline import load_text
from fabricgen.source import reader
from support.fabrics import REPO

LAB = REPO / "sites" / "lab" / "fabric.yaml"
RULE = '    - {from: prod-app, to: prod-db, protocol: tcp, ports: ["5432"]}\n'


def test_a_plain_fabric_is_read_fast_with_the_round_trip_values() -> None:
    text = LAB.read_text()
    fast, problems = reader.parse(text, "sites/lab/fabric.yaml")
    slow, _ = reader.parse(text, "sites/lab/fabric.yaml", fast=False)
    assert fast is not None and slow is not None and not problems
    assert fast.fast and not slow.fast
    assert fast.data == slow.data
    assert fast.located() is fast.located()  # read once, then kept


def test_many_warnings_read_the_positions_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """sites/lab with 200 rules the first already allows: 200 located warnings (FG906) from one
    round-trip reading of the text, not one per warning."""
    text = LAB.read_text()
    at = text.index(RULE) + len(RULE)
    text = text[:at] + RULE * 200 + text[at:]
    calls: list[bool] = []
    parse = reader.parse

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs.get("fast", True))
        return parse(*args, **kwargs)

    monkeypatch.setattr(reader, "parse", counted)
    _fabric, _source, warnings = load_text(text, "sites/lab/fabric.yaml")
    assert sum(w.code == "FG906" for w in warnings) == 200
    assert calls.count(False) == 1
