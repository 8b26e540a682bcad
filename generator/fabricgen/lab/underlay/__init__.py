"""The kernel underlay: every host the fabric names as a network namespace, joined by veth links at
the fabric's underlay MTU, running the files fabricgen rendered for it (nft, FRR), and every flow
the fabric needs between hosts sent through the kernel.

- `hosts`: the hosts, their addresses, uplinks and rendered files, read from a build;
- `needs`: the flows OVN needs between them (tunnels, OVSDB, raft, IC database);
- `namespaces`: network namespaces, links and sockets inside them;
- `frr`: FRR's zebra and bgpd per namespace, configured from the rendered `frr.conf` as
  frrinit.sh does (vtysh), and the lab's own top-of-rack router;
- `firewall`: the rendered nft files loaded with `nft -f`, and the rule that drops a flow named by
  the kernel's own trace (`nft monitor trace`);
- `probes`: UDP datagrams and TCP connections from one namespace to another;
- `stage`: the stage itself (`prove_underlay`) and its verdicts; `report`: them in words and JSON.
"""
