"""The subcommands: one module per subcommand; each exposes `run(**kwargs) -> int` and never sees argparse.

A command handles its arguments, picks the output format and returns the exit code; the
work is done in the stage packages. Heavy imports stay inside `run`.

Modules:

- `argocd_generate`: `fabricgen argocd-generate`.
- `diff`: `fabricgen diff FABRIC --base REV`.
- `generated_file`: writing a file a command generates (`schema -o`, `rules -o`).
- `graph`: `fabricgen graph FABRIC [--format mermaid|dot|svg]`.
- `import_`: `fabricgen import FABRIC --cluster NAME=FILE... --show FILE` (or `--from DIR`).
- `init`: `fabricgen init [DIR]`.
- `krm`: `fabricgen krm`.
- `render`: `fabricgen render FABRIC...`.
- `rules`: `fabricgen rules`.
- `schema`: `fabricgen schema`.
- `status`: `fabricgen status FABRIC`.
- `transit`: `fabricgen transit FABRIC [SHOW]`.
- `validate`: `fabricgen validate FABRIC...`.
- `verify`: `fabricgen verify FABRIC [--actual SHOW] [--logical] [--ovn-prefix DIR]`.
- `watching`: `fabricgen watching`.

May import: `fabricgen.adopt`, `fabricgen.scaffold`, `fabricgen.judge`, `fabricgen.lab`, `fabricgen.observe`,
`fabricgen.review`,
`fabricgen.delivery`, `fabricgen.output`, `fabricgen.report`, `fabricgen.pipeline`, `fabricgen.render`,
`fabricgen.validation`, `fabricgen.model`, `fabricgen.source`, `fabricgen.serialise`,
and the shared `errors`, `exit_codes`, `diagnostics`.
"""
