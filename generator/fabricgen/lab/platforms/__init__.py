"""What each platform's controller writes into the lab's OVN, from the rendered objects.

- `kubeovn`: what Kube-OVN's controllers write into a zone's northbound database (the routers,
  switches, routes and Subnet ACLs).
- `neutron`: what Neutron's ML2/OVN driver writes for the rendered security groups.
- `ovn_kubernetes`: what OVN-Kubernetes writes for the rendered NetworkPolicies.
- `nb_rows`: ovn-nbctl commands that create the rows a controller writes, in one transaction
  with others.
- `platform_policy`: the policy's members, each with the rows its platform's controller writes.
- `coexistence`: what another controller does to ACL rows it does not own.

The rows' shapes that `judge` reads too live in `fabricgen.platform_rows`.
"""
