"""Review: what a fabric change does, for a pull request.

- `git_revisions`: a fabric as it was at a git revision.
- `semantic_diff`: two builds compared object by object, with cautions for risky changes.
- `topology`: the fabric as a graph (Mermaid, DOT, SVG), with what changed marked.
- `pull_request`: the parts of the pull-request comment built from those.

Also:

- `policy_changes`: policy changes as a reviewer reads them.

May import: `fabricgen.pipeline`, `fabricgen.report`, `fabricgen.plan`, `fabricgen.model`,
`fabricgen.source`, `fabricgen.serialise`, and the shared `errors`, `exit_codes`, `diagnostics`.
"""
