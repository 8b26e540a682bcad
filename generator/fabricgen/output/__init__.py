"""The output tree on disk: the only place that writes rendered files.

- `emit`: compares builds with `rendered/`, stages every new tree beside the old one, swaps
  them all in (or none) and prunes what no longer exists.
- `ownership`: what a run must not replace or remove (an input fabric, a tracked file
  fabricgen did not write), checked before anything is touched.
- `private_cache`: fabricgen's own cache, outside the repository: the render record of each
  site directory and the Argo CD plugin's output (standard library only).
- `git_index`: the fabrics and rendered trees git tracks (`render --all`), read from the index.
- `new_file`: a file that must not exist yet (the fabric `import` writes), created atomically.

May import: `fabricgen.pipeline` (and what it builds on), `fabricgen.serialise`, and the
shared `errors`, `exit_codes`, `diagnostics`.
"""
