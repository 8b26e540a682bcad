"""The subcommands: one module per subcommand; each exposes `run(**kwargs) -> int` and never sees argparse.

A command handles its arguments, picks the output format and returns the exit code; the
work is done in the stage packages. Heavy imports stay inside `run`.

May import: `fabricgen.adopt`, `fabricgen.scaffold`, `fabricgen.judge`, `fabricgen.lab`, `fabricgen.observe`,
`fabricgen.review`,
`fabricgen.delivery`, `fabricgen.output`, `fabricgen.report`, `fabricgen.pipeline`, `fabricgen.render`,
`fabricgen.validation`, `fabricgen.model`, `fabricgen.source`, `fabricgen.serialise`,
and the shared `errors`, `exit_codes`, `diagnostics`.
"""
