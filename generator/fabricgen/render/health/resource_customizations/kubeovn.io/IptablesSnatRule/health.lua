-- Kube-OVN IptablesSnatRule, from kubeovn/kube-ovn v1.16.2: pkg/apis/kubeovn/v1/iptables-snat-rule.go
-- (IptablesSnatRuleStatus) and pkg/controller/vpc_nat_gw_nat.go (patchSnatStatus sets status.ready once the
-- rule is in the NAT gateway pod). Kube-OVN declares conditions for it but sets only status.ready.
local hs = {}
if obj.status ~= nil and obj.status.ready == true then
  hs.status = "Healthy"
  hs.message = "SNAT rule is applied on " .. tostring(obj.status.v4ip)
  return hs
end
hs.status = "Progressing"
hs.message = "Waiting for the NAT gateway of elastic IP " .. tostring(obj.spec.eip) .. " to apply the SNAT rule"
return hs
