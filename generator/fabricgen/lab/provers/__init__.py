"""The proofs: what became of a packet between two endpoints, and of every flow the policy names.

- `paths`: the endpoints and what became of a packet between two.
- `tracing`: a pair proven with ovn-trace; `dataplane`: with packets through the chassis.
- `policy_flows`: the policy's flows within a zone; `member_flows`: between platforms and
  zones; `policy_packets`: its connections as packets.
- `matches`: every match fabricgen rendered (Subnet ACLs, VPC policy routes), judged by OVN.
- `proof`: every ordered pair of endpoints in different AZs proven, and the policy's flows.
"""
