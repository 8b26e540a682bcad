"""The proof lab: a throwaway OVN-IC of real OVN daemons, built from a fabric's rendered output to
prove its routes before they merge (`fabricgen verify`). Nothing here reads a running fabric.

- `programs`: which OVN and Open vSwitch programs run, and their versions.
- `sandbox`: the control plane (IC NB/SB; per AZ an NB/SB, ovn-northd and ovn-ic) on unix
  sockets in a private temporary directory, stopped by its own pidfiles; `processes` finds and
  stops whatever the lab started; `unixctl` is the JSON-RPC client of OVS/OVN control sockets
  (`ovn-trace --detach`).
- `kubeovn`: what Kube-OVN's controllers write into a zone's northbound database.
- `chassis`: simulated chassis on a simulated underlay (ovs-vswitchd with the dummy datapath,
  ovn-controller); `packets`: the frames sent and the pcap files read back.
- `assembly`: the lab built from the rendered output, started and always stopped.
- `paths`: the endpoints and what became of a packet between two; `tracing` proves a pair with
  ovn-trace, `dataplane` with packets.
- `proof`: every ordered pair of endpoints in different AZs proven; `report`: `verify`'s
  matrix as text, Markdown and JSON.

Nothing here is imported unless `fabricgen verify` (or a test) runs.

Also:

- `coexistence`: what another controller does to ACL rows it does not own, played in a lab's
  northbound DB.
- `member_flows`: the policy between platforms and zones.
- `nb_rows`: ovn-nbctl commands that create the rows a controller writes into a northbound DB, in
  one transaction with others.
- `neutron`: what Neutron's ML2/OVN driver writes into the lab's northbound DB for the rendered
  security groups.
- `ovn_kubernetes`: what OVN-Kubernetes writes into its northbound DB for the rendered
  NetworkPolicies.
- `platform_policy`: the policy's members in the lab, each with the rows its platform's controller
  writes from the rendered objects.
- `policy_flows`: the policy proven in the lab.
- `policy_packets`: the policy's connections as packets through the data-plane lab's chassis.
- `settling`: when the simulated data plane has settled.

May import: `fabricgen.observe`, `fabricgen.pipeline`, `fabricgen.report`, `fabricgen.plan`,
`fabricgen.model`, `fabricgen.source`, `fabricgen.serialise`, and the shared `errors`,
`exit_codes`, `diagnostics`.
"""
