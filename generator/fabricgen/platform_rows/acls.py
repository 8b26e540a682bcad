"""An ACL row as a platform's controller writes it, with who wrote it in words: what the lab
writes and names when the row decides a flow, and what status looks for in a live database."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Acl:
    """One ACL: its columns, and who wrote it (`Neutron security group web`)."""

    direction: str
    priority: int
    match: str
    action: str
    owner: str
    external_ids: tuple[tuple[str, str], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"direction": self.direction, "priority": self.priority, "match": self.match, "action": self.action,
                "owner": self.owner}
