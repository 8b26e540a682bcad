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
DENIED = "denied"  # not delivered, as the fabric's policy says: it admits no ICMP between the two


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
    outcome: str  # DELIVERED, REROUTED, DROPPED, WRONG_ZONE, UNRESOLVED, ALTERED or DENIED
    detail: str  # where the packet went, in words

    @property
    def delivered(self) -> bool:
        return self.outcome == DELIVERED

    @property
    def as_it_should(self) -> bool:
        """Delivered, or not delivered where the policy denies it."""
        return self.outcome in (DELIVERED, DENIED)

    def as_dict(self) -> dict[str, object]:
        return {"from": self.source.as_dict(), "to": self.target.as_dict(), "delivered": self.delivered,
                "outcome": self.outcome, "detail": self.detail}
