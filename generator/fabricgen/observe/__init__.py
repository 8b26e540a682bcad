"""Observe: reading what runs. The first day-2 stage; it says what is there, never whether it is
right (that is `fabricgen.judge`).

- `sources`: where each AZ's, the IC database's and each raft member's state is read: the zone's
  cluster through kubectl (as `kubectl ko` reaches it), or direct OVSDB remotes and control
  sockets from an endpoints file (the default for OVN deployments).
- `read_commands`: the read-only commands that read it, each with a stable key.
- `runner`: runs them (several at once, bounded), records them into a capture directory
  (`--capture`), or answers them from one (`--from`); nothing else here runs a command.
- `capture`: the capture directory's format, read and written within bounds.
- `live_fabric`: the observations of one run, parsed per AZ and for the IC database.
- The parsers of what OVN and kubectl print: `ovsdb_rows` (the JSON of ovn-nbctl, ovn-sbctl,
  ovn-ic-sbctl), `icsb_show` (`ovn-ic-sbctl show`), `icnb_options` (the IC northbound options),
  `raft_status` (`cluster/status`), `raft_server_db` (the `_Server` database's `Database` rows),
  `raft_address` (raft addresses as OVSDB means them), `kube_objects` (what
  `kubectl get -o yaml|json` prints), and `json_bounds` (the numbers and nesting any JSON from
  the live side may hold).


May import: `fabricgen.platform_rows`, `fabricgen.live_text`, `fabricgen.pipeline`, `fabricgen.report`,
`fabricgen.plan`, `fabricgen.model`, `fabricgen.source`, `fabricgen.serialise`, and the shared `errors`,
`exit_codes`, `diagnostics`, `files` (and the package's version, for
captures).
"""
