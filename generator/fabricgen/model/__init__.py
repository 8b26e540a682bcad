"""The validated fabric model (pydantic). Field docstrings become the JSON schema."""

from fabricgen.model.fabric import API_VERSION, Fabric

__all__ = ["API_VERSION", "Fabric"]
