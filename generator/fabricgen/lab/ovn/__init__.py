"""The throwaway OVN: real OVN and Open vSwitch daemons on unix sockets in a private directory.

- `programs`: which OVN and Open vSwitch programs run, and their versions.
- `sandbox`: the control plane (IC NB/SB; per AZ an NB/SB, ovn-northd and ovn-ic) and the
  interconnection built on it as Kube-OVN builds it, in three parts: its `databases` (sockets,
  ctl programs, OVSDB transactions), its `daemons` (started, paused, stopped by their own
  pidfiles) and its tracing daemons (`tracers`: one `ovn-trace --detach` per AZ); `running` runs
  its commands and waits on its daemons, `processes` finds and stops whatever the lab started;
  `unixctl` is the JSON-RPC client of OVS/OVN control sockets.
- `chassis`: simulated chassis on a simulated underlay (ovs-vswitchd with the dummy datapath,
  ovn-controller); `packets`: the frames sent and the pcap files read back; `settling`: when the
  simulated data plane has settled.
- `matches`: match expressions judged by OVN's own parser (ovn-trace over a throwaway southbound
  database holding the address sets and port groups they name).
"""
