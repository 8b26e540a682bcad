"""The lab's endpoints (a zone's backbone, a deployment's advertised range) and what became of
a packet between two of them: its outcome, one of the names below, and where it went in words.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Network

DELIVERED = "delivered"
REROUTED = "rerouted"
DROPPED = "dropped"
WRONG_ZONE = "wrong-zone"
UNRESOLVED = "unresolved"
ALTERED = "altered"  # delivered with an address translated on the way


@dataclass(frozen=True)
class Endpoint:
    az: str
    cidr: IPv4Network
    label: str  # the AZ, or `AZ CIDR` when the AZ has several

    def as_dict(self) -> dict[str, str]:
        return {"az": self.az, "cidr": str(self.cidr)}


@dataclass(frozen=True)
class Pair:
    source: Endpoint
    target: Endpoint
    outcome: str  # DELIVERED, REROUTED, DROPPED, WRONG_ZONE, UNRESOLVED or ALTERED
    detail: str  # where the packet went, in words

    @property
    def delivered(self) -> bool:
        return self.outcome == DELIVERED

    def as_dict(self) -> dict[str, object]:
        return {"from": self.source.as_dict(), "to": self.target.as_dict(), "delivered": self.delivered,
                "outcome": self.outcome, "detail": self.detail}
