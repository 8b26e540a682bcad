"""The fabric source: fabric.yaml as text, with the place of every node.

- `reader`: reads and parses fabric.yaml (ruamel round trip, so every node keeps its
  line and column); syntax errors and duplicate keys become located diagnostics.
- `writer`: changes scalars of fabric.yaml in place, every other byte kept, and replaces
  the file atomically (`fabricgen transit --write`).
- `provenance`: how generated files name their source fabric.

May import: `fabricgen.serialise`, and the shared `errors`, `exit_codes`, `diagnostics`.
"""
