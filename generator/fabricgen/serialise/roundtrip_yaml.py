"""The round-trip ruamel.yaml loader and dumper for YAML that users wrote: the only
place that creates a `ruamel.yaml.YAML`.

It keeps line and column of every node (`fabricgen.source.reader` locates diagnostics
with them), comments, key order and quoting, and never folds long lines.
`fabricgen.source.writer` finds the spans it edits in fabric.yaml with its parser and
`fabricgen.delivery.resource_list` passes kpt's and kustomize's items through it.
Kubernetes output is written by `fabricgen.serialise.manifest_yaml`, not by ruamel.yaml.
"""

from __future__ import annotations

from typing import Any


def round_trip(*, preserve_quotes: bool = True, comments: bool = True) -> Any:
    """A round-trip YAML instance.

    Duplicate keys are always an error. `preserve_quotes=False` loads plain `str`
    scalars, which is what validation wants. `comments=False` reads with the plain
    scanner and parser, which skip comments (about a fifth faster): the loaded document
    is the same, with the same positions, but has no comments to write back."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    if not comments:
        from ruamel.yaml.parser import Parser
        from ruamel.yaml.scanner import Scanner

        yaml.Scanner, yaml.Parser = Scanner, Parser
    yaml.allow_duplicate_keys = False
    yaml.preserve_quotes = preserve_quotes
    yaml.width = 4096  # never re-wrap long lines or fold long annotation values
    return yaml
