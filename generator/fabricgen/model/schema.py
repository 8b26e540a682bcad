"""The JSON schema of fabric.yaml, generated from the models and their field docstrings."""

from __future__ import annotations

import json

from fabricgen.model import Fabric, docstrings

SCHEMA_ID = "https://fabricgen.io/schemas/fabric.schema.json"


def schema_text() -> str:
    docstrings.attach(Fabric)
    schema = Fabric.model_json_schema(by_alias=True, mode="validation")
    doc = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
