"""Names and values Kubernetes and Kube-OVN give, which the rendered output, the live side and
the lab share: one definition each, imported where used.

- `KUBE_SYSTEM`: the namespace of Kube-OVN's own objects (`ovn-ic-config`, the IC server).
- `DEFAULT_VPC`: Kube-OVN's default VPC and its logical router, `ovn-cluster`
  (kubeovn/kube-ovn `pkg/util/const.go` DefaultVpc).
- `EXTERNAL_NETWORK`: the Subnet and NAD of the VPC NAT gateways' external network
  (`pkg/util/const.go` VpcExternalNet, `ovn-vpc-external-network`).
- `NAMESPACE_NAME_LABEL`: the label the API server gives every Namespace, its own name
  (`kubernetes.io/metadata.name`), by which NetworkPolicies and AdminNetworkPolicies select one.
- `ROUTE_POLICY`: a Vpc static route's `policy` as OVN's `Logical_Router_Static_Route.policy`
  holds it (`pkg/controller/vpc.go`: `policyDst` is `dst-ip`, `policySrc` `src-ip`; Kube-OVN
  writes `dst-ip` for a route that names none).
"""

KUBE_SYSTEM = "kube-system"
DEFAULT_VPC = "ovn-cluster"
EXTERNAL_NETWORK = "ovn-vpc-external-network"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
ROUTE_POLICY = {"policyDst": "dst-ip", "policySrc": "src-ip", "": "dst-ip"}
