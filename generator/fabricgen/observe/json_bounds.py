"""What JSON from the live side may hold, for every reader of it (kubectl's objects, a capture's
index): no number beyond an int64 (Python's `int` of thousands of digits is slow to make and
refused past 4,300 digits), no NaN or Infinity (JSON has neither, Python's decoder takes both),
no nesting deeper than the reader allows.

    json.loads(text, parse_int=parse_int, parse_constant=parse_constant)  # OddNumber past the bound
    deeper_than(value, 8)                                                  # without recursion
"""

from __future__ import annotations

from typing import Any

MAX_INT_DIGITS = 20  # an int64 has at most 19 digits, and a sign


class OddNumber(ValueError):
    """A number JSON allows but no reader here takes: more digits than an int64, NaN, Infinity.
    Its text says which (`an integer of 5000 digits`, `NaN`)."""


def parse_int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS:
        raise OddNumber(f"an integer of {len(text)} digits")
    return int(text)


def parse_constant(text: str) -> Any:
    raise OddNumber(text)


def deeper_than(value: Any, limit: int) -> bool:
    """Whether lists and mappings nest in `value` more than `limit` levels (the value itself is
    level 1), found without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return False
