"""Live state: what a running OVN-IC holds, compared with the fabric and proven in a lab.

- `icsb_show`: the text of `ovn-ic-sbctl show`, parsed.
- `kube_objects`: what `kubectl get -o yaml|json` prints, read, normalised (what the API server,
  admission and Kube-OVN add) and compared with rendered objects field by field.
- `raft`: the raft health of a clustered OVSDB database (NB, SB, IC NB, IC SB) judged from its
  members into check lines (`checks`); `raft_status` parses `cluster/status`, `raft_server_db`
  the `_Server` database's `Database` rows; `raft_address` compares raft addresses as OVSDB
  means them.
- `json_bounds`: the numbers and nesting any JSON read from the live side may hold.
- `transit`: each zone's transit-switch address in the fabric against the IC southbound.
- `verification`: the `verify` matrix of a proof, as text, Markdown and JSON.
- `lab/`: a throwaway OVN-IC lab of real OVN daemons that proves rendered routes.

Nothing here is imported unless `fabricgen transit`, `verify`, `diff` or `import` (or a test) runs.

May import: `fabricgen.live_text`, `fabricgen.pipeline`, `fabricgen.report`, `fabricgen.plan`, `fabricgen.model`,
`fabricgen.source`, `fabricgen.serialise`, and the shared `errors`, `exit_codes`, `diagnostics`.
"""
