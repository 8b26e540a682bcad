"""The plan: everything derived from the validated model once, before anything renders.

- `zones`: the plan of a fabric, per zone: gateways, providers, tenant networks, routes.
- `joins`: each OVN deployment joined to the interconnection.
- `deployments`: what an OVN deployment's hosts and consumers derive (remotes, chassis, MTU).
- `routes`: the route list between zones.
- `apply_order`: what must exist before what, and the apply stage of every kind.

Validation rules check some of these derived values, so `fabricgen.validation` imports the
plan, never the other way round.

Also:

- `policy`: the fabric's policy resolved.

May import: `fabricgen.model`, `fabricgen.source`, `fabricgen.serialise`, and the shared
`errors`, `exit_codes`, `diagnostics`.
"""
