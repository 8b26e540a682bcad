"""Delivery: fabricgen run by the tools that apply its output, not by a person.

- `argocd_plugin`: the Argo CD config-management plugin's environment and zone choice.
- `krm_function`: the kustomize/kpt KRM function (`FabricGenerator`).
- `resource_list`: the KRM ResourceList read from stdin and written to stdout.
- `zone_selection`: one zone's objects out of a build.

May import: `fabricgen.pipeline`, `fabricgen.render`, `fabricgen.model`, `fabricgen.source`,
`fabricgen.serialise`, and the shared `errors`, `exit_codes`, `diagnostics`.
"""
