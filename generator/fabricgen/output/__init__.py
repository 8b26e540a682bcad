"""The output tree on disk: the only place that writes rendered files.

- `emit`: compares a build with `rendered/`, stages the new tree beside the old one, swaps
  them atomically and prunes what no longer exists.
- `git_index`: the fabrics and rendered trees git tracks (`render --all`), read from the index.
- `new_file`: a file that must not exist yet (the fabric `import` writes), created atomically.

May import: `fabricgen.pipeline` (and what it builds on), and the shared `errors`,
`exit_codes`, `diagnostics`.
"""
