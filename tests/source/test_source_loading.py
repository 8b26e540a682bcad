"""fabric.yaml is first read without its comments (faster); the document and every position
in it are then exactly what the round-trip loader gives, and on any error the round-trip
loader reads it again, so every diagnostic is worded and located as before.

Checked on the sample fabrics, on the raw-text corpus of test_robustness (fragments spliced
into the samples, and YAML-ish text), and on comments in every place YAML allows them.
"""

from __future__ import annotations

import warnings
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from test_robustness import SAMPLES, YAMLISH, spliced_fabric

from fabricgen.serialise.roundtrip_yaml import round_trip
from fabricgen.source.reader import _load_without_comments, parse
from fabricgen.source.yaml_checks import Refused

COMMENTED = """\
# head comment
apiVersion: fabricgen.io/v1alpha1   # trailing
kind: Fabric
metadata:
  # before a key
  name: lab
zones:   # after a key
  # before an item
  - name: a  # in an item
    gatewayNodes: [n1, # in a flow sequence
      n2]
    backbone: {cidr: 172.30.10.0/24,   # in a flow mapping
      network: {name: vsw}}
    x: |  # after a block indicator
      line 1
      # not a comment: block text
    y: &anchor {k: v}  # after an anchor
    z: *anchor
    <<: *anchor

  - name: b
# dedented comment
    w: "quoted # not a comment"
# tail comment
"""


def _positions(node: Any) -> Any:
    """The loaded document with the position of every mapping, key, value and item."""
    lc = getattr(node, "lc", None)
    here = None if lc is None else (lc.line, lc.col)
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            try:
                where = (lc.key(key), lc.value(key)) if lc is not None else None
            except (KeyError, TypeError):  # a key brought in by a merge key (<<)
                where = None
            out[repr(key)] = (where, _positions(value))
        return ("map", type(node).__name__, here, out)
    if isinstance(node, list):
        items = []
        for index, value in enumerate(node):
            try:
                where = lc.item(index) if lc is not None else None
            except (KeyError, IndexError, TypeError):
                where = None
            items.append((where, _positions(value)))
        return ("seq", type(node).__name__, here, items)
    return ("scalar", type(node).__name__, repr(node))


def _round_trip(text: str) -> list[Any] | None:
    try:
        return list(round_trip(preserve_quotes=False).load_all(text))
    except Exception:
        return None


def _same(text: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fast = _load_without_comments(text)
        except Refused:  # refused by its events as they were read (a tag, a reused anchor, depth)
            assert parse(text, "f.yaml")[0] is None
            return
        full = _round_trip(text)
    if full is None:
        assert fast is None  # an error is always reported by the round-trip loader
    elif fast is not None:
        assert [_positions(d) for d in fast] == [_positions(d) for d in full]


def test_samples_and_comments_everywhere_load_the_same() -> None:
    for text in [*SAMPLES.values(), COMMENTED, COMMENTED.replace("\n", "\r\n")]:
        assert _load_without_comments(text) is not None
        _same(text)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(st.one_of(spliced_fabric(), YAMLISH, st.text(max_size=200)))
def test_any_text_loads_the_same_or_is_reported_by_the_round_trip_loader(text: str) -> None:
    _same(text)


def test_a_syntax_error_is_worded_by_the_round_trip_loader() -> None:
    source, found = parse("a: [1, 2\nb: 3\n", "f.yaml")
    assert source is None
    assert [d.code for d in found] == ["FG001"]
    assert found[0].message.startswith("YAML syntax error: ")
