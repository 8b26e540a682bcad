"""The merge-patch JSON writer gives exactly what `json.dumps(indent=2, ensure_ascii=False)` gives."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricgen.render.default_vpc import json_text

SAMPLES: list[Any] = [
    {},
    [],
    {"a": [], "b": {}},
    [[], {}, [[]], [{}]],
    {"routes": [{"cidr": "172.30.20.0/24", "priority": 31000, "on": True, "off": False, "none": None}]},
    {"text": 'quote " backslash \\ tab \t nul \x00 del \x7f nel \x85 ls \u2028 bom \ufeff é 中'},
    {'key "quoted" é': ['\u2029', 0, -1, 2**40, {"deep": [{"x": "y"}]}]},
    "plain",
    7,
    None,
    # lists of flat dicts (routes) are written in one piece
    {"spec": {"staticRoutes": [{"cidr": "10.0.0.0/24", "bfdId": ""}, {"cidr": "},\n      {", "x": "}, {"}]}},
    [{"a": 1}, {"b": None, "c": True}, {"}": "{", "},": ",{"}],
    [[{"a": 1}], [{"a": 1}, {}], [{}, {"a": 1}], [{"a": 1}, []], [{"a": [1]}, {"b": 2}], [{"a": 1.5}]],
    {"l1": {"l2": {"l3": [{"k": "v"}, {"k": "w\n"}]}}},
]


@pytest.mark.parametrize("value", SAMPLES)
def test_same_text_as_json_dumps(value: Any) -> None:
    assert json_text(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_rejects_what_json_cannot_hold() -> None:
    with pytest.raises(TypeError):
        json_text({"a": object()})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=24,
)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(json_values)
def test_any_json_value_same_as_json_dumps(value: Any) -> None:
    assert json_text(value) == json.dumps(value, indent=2, ensure_ascii=False)
