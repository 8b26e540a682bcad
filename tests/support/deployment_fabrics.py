"""Small fabrics of OVN deployments the rule tests break in one place each: `BASE`, one CloudStack
deployment (named as `NAME`), and `SHARED`, OpenStack and OVN-Kubernetes on its one NB/SB."""

from __future__ import annotations

NAME = "sites/t/fabric.yaml"

BASE = """\
apiVersion: fabricgen.io/v1alpha1
kind: Fabric
metadata:
  name: t
ovnDeployments:
  - name: dc
    databases:
      members:
        - host: mgmt2
          address: 10.0.0.10
      clientNetworks: [10.0.0.0/24]
    providerNetworks:
      - name: public
        physicalNetwork: physnet1
    hosts:
      - name: kvm01
        ethernets:
          - name: eth0
          - name: eth1
        bridges:
          - name: cloudbr0
            interfaces: [eth0]
            addresses: [10.0.0.21/24]
          - name: cloudbr1
            interfaces: [eth1]
        vlans:
          - name: eth1.2000
            id: 2000
            link: eth1
            addresses: [10.250.0.21/20]
        tunnelEndpoint:
          interface: eth1.2000
        bridgeMappings:
          - physicalNetwork: physnet1
            bridge: cloudbr1
      - name: kvm02
        ethernets:
          - name: eth0
        tunnelEndpoint:
          loopback: 10.255.0.2/32
        bgp:
          asn: 65002
          uplinks: [eth0]
    consumers:
      - platform: cloudstack
        name: zone1
        hosts: [kvm01]
"""


SHARED = BASE.replace("""      - platform: cloudstack
        name: zone1
        hosts: [kvm01]
""", """      - platform: openstack
        name: region-one
        hosts: [kvm01]
      - platform: kubernetes
        name: k8s
        hosts: [kvm02]
        apiServer: https://10.0.0.5:6443
    ovnVersion: "24.03"
""")  # OVN-Kubernetes v1.3.0 (the default) needs OVN 23.06 or later (FG912)


def shop_api_into_shop_db(text: str, *rules: str) -> str:
    """sites/openstack-k8s's fabric `text` with a second pod group, shop-api, given as the same pod
    range as shop-web (10.128.0.0/14), and `rules` (flow-style rule lines) after shop-web's into
    shop-db: the rules Neutron keys alike."""
    from support.fabrics import edit  # fabrics imports nothing of this module

    text = edit(text, "    - name: shop-db\n",
                "    - name: shop-api\n      members:\n        - namespace: {cluster: k8s-prod, name: shop, "
                "podSelector: {app: api}, cidr: 10.128.0.0/14}\n    - name: shop-db\n")
    first = '    - {from: shop-web, to: shop-db, protocol: tcp, ports: ["5432"]}\n'
    return edit(text, first, first + "".join(f"    - {rule}\n" for rule in rules))
