"""The fabric model (pydantic): types, names, ranges and unknown keys, checked as it loads.

Field docstrings become the JSON schema (`schema`).

May import: nothing of fabricgen but the shared `errors`, `exit_codes`, `diagnostics`.
"""

from fabricgen.model.fabric import API_VERSION, Fabric

__all__ = ["API_VERSION", "Fabric"]
