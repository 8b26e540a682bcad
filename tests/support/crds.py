"""The upstream CRD schemas vendored in tests/crds/ (see its README), as strict JSON Schemas: an
object a CRD would prune a field of is refused here instead."""

from __future__ import annotations

from functools import cache
from typing import Any

import jsonschema
import yaml

from support.fabrics import CRD_DIR

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)




def strict(schema: Any) -> Any:
    """Reject unknown fields wherever the schema lists its properties."""
    if isinstance(schema, dict):
        schema = {k: strict(v) for k, v in schema.items()}
        if ("properties" in schema and "additionalProperties" not in schema
                and not schema.get("x-kubernetes-preserve-unknown-fields")):
            schema["additionalProperties"] = False
        return schema
    if isinstance(schema, list):
        return [strict(v) for v in schema]
    return schema


@cache
def crd_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) -> strict openAPIV3Schema, from every CRD file in the reference."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(CRD_DIR.glob("*.yaml")):
        for crd in yaml.load_all(path.read_text(encoding="utf-8"), Loader=LOADER):
            if not crd or crd.get("kind") != "CustomResourceDefinition":
                continue
            group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
            for version in crd["spec"]["versions"]:
                if version.get("served"):
                    found[(f"{group}/{version['name']}", kind)] = strict(version["schema"]["openAPIV3Schema"])
    return found


@cache
def crd_validator(api_version: str, kind: str) -> jsonschema.protocols.Validator:
    schema = crd_schema(api_version, kind)
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def crd_schema(api_version: str, kind: str) -> dict[str, Any]:
    schema = crd_schemas().get((api_version, kind))
    assert schema is not None, f"no served CRD version for {api_version} {kind} in {CRD_DIR}"
    return schema
