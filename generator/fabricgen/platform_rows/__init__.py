"""What a platform's controller writes into OVN for the rendered objects: the rows' shapes, which
the lab writes (`fabricgen.lab.platforms`) and `status` reads back (`fabricgen.judge`), from one
definition.

- `acls`: an ACL row as a platform's controller writes it, with who wrote it in words.
- `neutron`: what Neutron's ML2/OVN driver writes into its northbound DB for a security group
  (its port groups and ACLs).

May import: `fabricgen.pipeline`, `fabricgen.plan`, `fabricgen.model`, `fabricgen.source`,
`fabricgen.serialise`, and the shared `errors`, `exit_codes`, `diagnostics`.
"""
