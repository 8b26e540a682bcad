"""The proof lab: a throwaway OVN-IC of real OVN daemons, built from a fabric's rendered output to
prove its routes and its policy before they merge (`fabricgen verify`). Nothing here reads a
running fabric. Four rooms, and the two modules that join them:

- `ovn/`: the throwaway OVN itself: its programs, the control plane, simulated chassis and the
  packets they carry;
- `platforms/`: what each platform's controller writes into it (Kube-OVN, Neutron,
  OVN-Kubernetes), and what one does to another's rows;
- `provers/`: each proof: a pair of AZs by ovn-trace or by packets, the policy's flows, and the
  proof of a whole fabric;
- `underlay/`: the kernel underlay: the hosts' rendered nft and frr.conf in network namespaces,
  and every flow OVN needs between hosts sent through the kernel;
- `assembly`: the lab built from the rendered output, started and always stopped;
- `verify`: `fabricgen verify`'s entry point (`prove`) and its matrix as text, Markdown and JSON.

Nothing here is imported unless `fabricgen verify` (or a test) runs.

May import: `fabricgen.platform_rows`, `fabricgen.observe`, `fabricgen.pipeline`, `fabricgen.report`,
`fabricgen.plan`, `fabricgen.model`, `fabricgen.source`, `fabricgen.serialise`, and the shared
`errors`, `exit_codes`, `diagnostics`.
"""
