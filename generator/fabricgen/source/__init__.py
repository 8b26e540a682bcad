"""The fabric source: fabric.yaml as text, with the place of every node.

- `reader`: reads and parses fabric.yaml (ruamel round trip, so every node keeps its
  line and column); syntax errors and duplicate keys become located diagnostics;
- `yaml_checks`: what a fabric may not hold (nesting, aliases, tags, reused anchors, shapes
  the model cannot take), refused on ruamel's events as `reader` reads them;
- `writer`: changes scalars of fabric.yaml in place, every other byte kept, and replaces
  the file atomically (`fabricgen transit --write`).
- `provenance`: how generated files name their source fabric.

May import: `fabricgen.serialise`, and the shared `errors`, `exit_codes`, `diagnostics`.
"""
