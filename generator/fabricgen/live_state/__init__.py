"""Live state: what a running OVN-IC holds, compared with the fabric and proven in a lab.

- `icsb_show`: the text of `ovn-ic-sbctl show`, parsed.
- `transit`: each zone's transit-switch address in the fabric against the IC southbound.
- `verification`: the `verify` matrix of a proof, as text, Markdown and JSON.
- `lab/`: a throwaway OVN-IC lab of real OVN daemons that proves rendered routes.

Nothing here is imported unless `fabricgen transit`, `verify` or `diff` (or a test) runs.

May import: `fabricgen.pipeline`, `fabricgen.report`, `fabricgen.plan`, `fabricgen.model`,
`fabricgen.source`, and the shared `errors`, `exit_codes`, `diagnostics`.
"""
