"""`fabricgen status`: the running fabric against what fabric.yaml renders, and the health of its
control plane, one check line each (`live_state.checks`).

The steps run one way, like the pipeline's:

- `sources`: where each AZ's, the IC database's and each raft member's state is read (the
  zone's cluster through kubectl, as `kubectl ko` reaches it; or direct OVSDB remotes and
  control sockets from an endpoints file, the default for OVN deployments);
- `probes` and `commands`: the read-only commands that read it, each with a stable key;
- `observe`: runs them (several at once, bounded), records them into a capture directory
  (`--capture`), or answers them from one (`--from`): judging never runs a command itself;
- `ovsdb_rows`: the JSON that ovn-nbctl, ovn-sbctl and ovn-ic-sbctl print, as rows;
- `live`: the observations of one run, parsed per AZ;
- `interconnection`, `routes`, `objects`, `raft_health`: the checks;
- `report`: text, JSON and Markdown.

May import: `fabricgen.live_text`, `fabricgen.live_state`, `fabricgen.pipeline`, `fabricgen.report`, `fabricgen.plan`,
`fabricgen.model`, `fabricgen.source`, `fabricgen.serialise`, and the shared `errors`,
`exit_codes`, `diagnostics`, `regular_file` (and the package's version, for captures).
"""
