"""The fabric model (pydantic): types, names, ranges and unknown keys, checked as it loads.

Field docstrings become the JSON schema (`schema`).

The model modules, unlike the rest of fabricgen, do not postpone annotations
(`from __future__ import annotations`): pydantic would evaluate every field's annotation
string when the class is created, a fifth of creating the models on every run. A
validator returns `Self`, so that no annotation names a class before it exists.

May import: nothing of fabricgen but the shared `errors`, `exit_codes`, `diagnostics`.
"""

from fabricgen.model.fabric import API_VERSION, Fabric

__all__ = ["API_VERSION", "Fabric"]
