"""Serialisation: how data becomes YAML text, and how YAML is read back in round trip.

- `manifest_yaml`: Kubernetes objects (plain data) to YAML, written once, safe for any value.
- `roundtrip_yaml`: the ruamel.yaml round-trip settings that reading and in-place writing share.
- `render_record`: what render wrote for a site and from what, as fabricgen's private cache
  keeps it (standard library only: the fast path reads it without loading the pipeline).

Also:

- `commented_yaml`: writing a new, commented YAML document (the fabric `fabricgen import` writes).

May import: `fabricgen.live_text`, and the shared `errors`, `exit_codes`, `diagnostics`.
"""
