"""Family `targeted`: one case per hostile input or use that has broken fabricgen before, each
with the safe behaviour the documentation (docs/) promises. One module per subject:

- `integrity`: forged committed stamps against `render --check`, `render` and the plugin; `-o`
  over inputs and tracked files; several fabrics written all or none; planted links and FIFOs;
- `transit`: `transit --write` keeps every other byte, links, mode and owner; ambiguous or
  impossible captures; a directory it cannot write;
- `plugin`: the Argo CD plugin's fabric discovery and settings, `manifest-generate-paths`,
  broken pipes of every command that prints;
- `inputs`: bytes that are not UTF-8, explicit tags, deep nesting, alias bombs, sizes, special
  files, KRM limits, `diff --base` revisions;
- `values`: values an accepted fabric must not pass to a reader that refuses them (`/0`
  prefixes, huge numbers, a final line break, transit network and broadcast addresses), the
  review comment's size, a removed zone, the CI examples' install lines.
"""

from __future__ import annotations

from hostile.harness import Case, Context
from hostile.targeted import inputs, integrity, plugin, transit, values


def cases(ctx: Context) -> list[Case]:
    found: list[Case] = []
    for module in (integrity, transit, plugin, inputs, values):
        found += module.cases(ctx)
    return found
