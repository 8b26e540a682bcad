-- Kube-OVN IptablesEIP, from kubeovn/kube-ovn v1.16.2: pkg/apis/kubeovn/v1/iptables-eip.go
-- (IptablesEIPStatus) and pkg/controller/vpc_nat_gw_eip.go (handleAddIptablesEip sets
-- status.ready once the gateway pod holds the address). Kube-OVN declares conditions for it but
-- sets only status.ready.
local hs = {}
if obj.status ~= nil and obj.status.ready == true then
  hs.status = "Healthy"
  hs.message = "Elastic IP " .. tostring(obj.status.ip) .. " is held by NAT gateway " .. tostring(obj.spec.natGwDp)
  return hs
end
hs.status = "Progressing"
hs.message = "Waiting for NAT gateway " .. tostring(obj.spec.natGwDp) .. " to hold the elastic IP"
return hs
