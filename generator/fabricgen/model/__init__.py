"""The fabric model (pydantic): types, names, ranges and unknown keys, checked as it loads.

Field docstrings become the JSON schema (`schema`).

The model modules, unlike the rest of fabricgen, do not postpone annotations
(`from __future__ import annotations`): pydantic would evaluate every field's annotation
string when the class is created, a fifth of creating the models on every run. A
validator returns `Self`, so that no annotation names a class before it exists.

Modules:

- `acl_match`: an OVN match expression, parsed the way OVN's own parser (lex.c, expr.c) reads it,
  for the `match` of a raw ACL or a policy route.
- `common`: shared field types and the base model for every fabric.yaml section.
- `consumers`: consumers of an OVN deployment.
- `delivery`: how Argo CD and Flux deliver the rendered output.
- `deployment_interconnect`: how an OVN deployment joins the fabric's OVN interconnection as an
  availability zone.
- `docstrings`: field documentation for the JSON schema, read from attribute docstrings.
- `fabric`: the top-level `Fabric` document.
- `hosts`: hosts that run ovn-controller (OVN chassis).
- `interconnect`: the OVN interconnection (OVN-IC).
- `names`: names and values Kubernetes and Kube-OVN give, which the rendered output, the live side
  and the lab share.
- `nat_gateway`: VPC NAT gateways.
- `ovn`: OVN deployments.
- `ovn_symbols`: the fields and predicates OVN's match language knows (width, kind), as OVN 25.03
  defines them; `acl_match` checks a match against them.
- `policy`: who may talk to whom.
- `reference`: the fabric.yaml reference in Markdown, generated from the JSON schema
  (`model.schema`).
- `tenancy`: tenant VPCs.
- `watch`: the fabric's watch.
- `zone`: a zone: its cluster's ranges, gateways, backbone and default-VPC routes.

May import: nothing of fabricgen but the shared `errors`, `exit_codes`, `diagnostics`.
"""

from fabricgen.model.fabric import API_VERSION, Fabric

__all__ = ["API_VERSION", "Fabric"]
