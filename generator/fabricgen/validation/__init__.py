"""Validation: the pydantic model checked against the source, then every semantic rule.

- `validator`: schema errors to located diagnostics, then all rules; every problem at once.
- `rules/`: the semantic rules, one module per family, each with a stable code.
- `network_index`: overlap look-ups between address ranges, for the rules.

Also:

- `registry`: the registry of semantic rules.

May import: `fabricgen.plan`, `fabricgen.model`, `fabricgen.source`, and the shared
`errors`, `exit_codes`, `diagnostics`.
"""
