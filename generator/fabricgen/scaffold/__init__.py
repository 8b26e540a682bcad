"""The scaffold of a new fabric repository (`fabricgen init`).

- `repository`: the files of a new repository, pinned to this fabricgen, from `templates/`.

May import: `fabricgen.output`, `fabricgen.pipeline`, `fabricgen.render`, `fabricgen.model`,
and the shared `errors`, `exit_codes`, `diagnostics`.
"""
