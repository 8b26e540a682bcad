"""The kernel underlay's proof in words: a summary line, what failed, and a JSON document."""

from __future__ import annotations

from fabricgen.lab.underlay.stage import UnderlayProof

# Said under a proof whose hosts ran on the kernel underlay.
RAN = ("the hosts' rendered nft and frr.conf ran on a kernel underlay (a network namespace per host, veth links at "
       "the underlay MTU, real nft and FRR); between hosts stands one router of the lab's own, and the OVN lab's "
       "chassis are joined by a simulated ideal underlay")


def summary(proof: UnderlayProof) -> str:
    passed = sum(f.ok for f in proof.flows)
    return f"{passed}/{len(proof.flows)} flows between hosts through the kernel underlay"


def how(proof: UnderlayProof) -> str:
    sessions = sum(s == "Established" for _, _, s in proof.sessions)
    bgp = f", {sessions}/{len(proof.sessions)} BGP sessions established" if proof.sessions else ""
    return (f"kernel underlay: {len(proof.hosts)} hosts as network namespaces, their rendered nft and frr.conf "
            f"loaded (FRR {proof.frr_version}){bgp}")


def failures(proof: UnderlayProof) -> list[str]:
    out = [f"refused: {r}" for r in proof.refused]
    out += [f"BGP session of {host} on {uplink}: {state}" for host, uplink, state in proof.sessions
            if state != "Established"]
    out += [f"not through: {f.need.label}: {f.verdict}: {f.detail}" for f in proof.flows if not f.ok]
    return out


def as_dict(proof: UnderlayProof) -> dict[str, object]:
    return {"hosts": list(proof.hosts), "frr": proof.frr_version, "ok": proof.ok,
            "refused": list(proof.refused),
            "sessions": [{"host": h, "uplink": u, "state": s} for h, u, s in proof.sessions],
            "flows": [f.as_dict() for f in proof.flows]}
