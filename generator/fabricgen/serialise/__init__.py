"""Serialisation: how data becomes YAML text, and how YAML is read back in round trip.

- `manifest_yaml`: Kubernetes objects (plain data) to YAML, written once, safe for any value.
- `roundtrip_yaml`: the ruamel.yaml round-trip settings that reading and in-place writing share.
- `stamp`: `<site>/.fabricgen.json`, what render wrote and from what (standard library only:
  the fast path reads it without loading the pipeline).

May import: nothing of fabricgen but the shared `errors`, `exit_codes`, `diagnostics`.
"""
