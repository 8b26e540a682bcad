"""Adoption: a fabric.yaml written from a running fabric (`fabricgen import`), with its proof.

- `inputs`: what a user captures with stock commands, read and checked: per cluster the output
  of `kubectl get ... -o yaml|json`, one `ovn-ic-sbctl show`, optionally the IC northbound
  options. A second input format (a capture directory) produces the same `LiveInput`.
- `mapping`: the live objects turned into a fabric: zones, the interconnection, backbones,
  default-VPC routes fabricgen would not derive, tenant VPCs and peerings, NAT gateways; and
  what became of every live object.
- `document`: the fabric as a commented YAML document.
- `proof`: the imported fabric rendered and compared with the live objects, object by object:
  imported, partial, conflict, unmapped, added.
- `summary`: the proof as text and JSON.

Nothing here writes a file; `fabricgen.output.new_file` does.

Also:

- `adoption`: one `fabricgen import`.
- `ic_server`: what runs of the IC database, so that `import` declares every raft member that runs.
- `interconnect_mapping`: the clusters that are zones, their AZs on the transit switch of `ovn-ic-
  sbctl show`, and the interconnection (`mapping` has the rules).
- `ledger`: what became of every live object (`Use`, `AzUse`, `Imported`), and the mapper's ledger
  of it.
- `live_values`: the values `fabricgen import` reads from live objects, each read as what the fabric
  can say or None (a name that is not a DNS-1123 label, a CIDR that is not IPv4).
- `tenant_mapping`: a zone's tenant VPCs with their subnets and peerings, and its NAT gateways with
  their elastic IPs, rules and external network (`mapping` has the rules).
- `zone_mapping`: one zone's part of the fabric.

May import: `fabricgen.judge`, `fabricgen.observe`, `fabricgen.live_text`, `fabricgen.pipeline`, `fabricgen.report`,
`fabricgen.validation`, `fabricgen.plan`, `fabricgen.model`, `fabricgen.source`,
`fabricgen.serialise`, and the shared `errors`, `exit_codes`, `diagnostics`.
"""
