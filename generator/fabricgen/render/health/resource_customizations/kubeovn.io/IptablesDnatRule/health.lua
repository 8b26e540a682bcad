-- Kube-OVN IptablesDnatRule, from kubeovn/kube-ovn v1.16.2: pkg/apis/kubeovn/v1/iptables-dnat-rule.go
-- (IptablesDnatRuleStatus) and pkg/controller/vpc_nat_gw_nat.go (patchDnatStatus sets status.ready once the
-- rule is in the NAT gateway pod). Kube-OVN declares conditions for it but sets only status.ready.
local hs = {}
if obj.status ~= nil and obj.status.ready == true then
  hs.status = "Healthy"
  hs.message = "DNAT rule is applied on " .. tostring(obj.status.v4ip)
  return hs
end
hs.status = "Progressing"
hs.message = "Waiting for the NAT gateway of elastic IP " .. tostring(obj.spec.eip) .. " to apply the DNAT rule"
return hs
