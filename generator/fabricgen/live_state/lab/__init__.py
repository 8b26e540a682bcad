"""A throwaway OVN-IC lab of real OVN daemons, to prove rendered routes before they merge.

- `sandbox`: the control plane (IC NB/SB; per AZ an NB/SB, ovn-northd and ovn-ic) on
  unix sockets in a private temporary directory, stopped by its own pidfiles.
- `unixctl`: the JSON-RPC client of OVS/OVN control sockets (`ovn-trace --detach`).
- `kubeovn`: what Kube-OVN's controllers write into a zone's northbound database.
- `proof`: a fabric's rendered output in that lab, and every path between AZs traced.

Nothing here is imported unless `fabricgen verify` (or a test) runs.
"""
