"""Judge: what `fabricgen observe` read, held against what fabric.yaml renders, one check line
each (`checks`), with its fix. This is `fabricgen status` and `fabricgen transit`.

- `expected`: what each AZ should hold, from the fabric's build.
- `interconnection`, `routes`, `objects`, `raft_health`: the checks of `status`; `raft` judges
  one clustered OVSDB database (NB, SB, IC NB, IC SB) from its members; `kube_compare`
  normalises a live object (what the API server, admission and Kube-OVN add) and compares it
  with the rendered one field by field.
- `verdicts`: every check of one run, and the worst verdict.
- `report`: text, JSON and Markdown.
- `transit`: each zone's transit-switch address in the fabric against the IC southbound, and
  the edit that brings fabric.yaml in line (`fabricgen transit --write`).

Nothing here runs a command: it judges observations (`fabricgen.observe.runner`).

Also:

- `exporter`: `fabricgen status --serve ADDRESS`.
- `openmetrics`: `fabricgen status --format openmetrics`.
- `raft_members`: who is who in one raft database (OVN NB, SB, IC NB, IC SB).
- `raft_readings`: each raft member as it answered, for the per-member metrics of `fabricgen status
  --format openmetrics` (`judge.openmetrics`).
- `run`: one `fabricgen status` run.
- `network_policies`: NetworkPolicies of other owners that select a protected group's pods.
- `admin_network_policies`: AdminNetworkPolicies of other owners decided before the policy's.
- `security_groups`: the rendered Neutron security groups, as Neutron wrote them into a deployment's
  northbound DB.
- `subnet_ports`: whether a Subnet's update reached OVN, which Argo CD and Flux cannot tell.

May import: `fabricgen.observe`, `fabricgen.platform_rows`, `fabricgen.live_text`, `fabricgen.pipeline`,
`fabricgen.report`, `fabricgen.plan`, `fabricgen.model`, `fabricgen.source`, `fabricgen.serialise`, and the shared
`errors`, `exit_codes`, `diagnostics`, `files`.
"""
