-- Kube-OVN IptablesSnatRule, from kubeovn/kube-ovn v1.16.2: pkg/apis/kubeovn/v1/iptables-snat-rule.go
-- (IptablesSnatRuleStatus) and pkg/controller/vpc_nat_gw_nat.go. patchSnatStatus sets status.ready
-- once the rule is in the NAT gateway pod, and copies the internalCIDR it applied into the status;
-- a changed rule goes ready false, is replaced, then ready true with the new values
-- (handleUpdateIptablesSnatRule), but a failure before that leaves ready true with the old ones,
-- and the declared conditions are never set. So Healthy also needs the status to echo the spec
-- (as a /32 where Kube-OVN writes an address in its canonical form).
local hs = {}
local function text(value)
  if value == nil then
    return ""
  end
  return tostring(value)
end
local spec = obj.spec or {}
if obj.status == nil or obj.status.ready ~= true then
  hs.status = "Progressing"
  hs.message = "Waiting for the NAT gateway of elastic IP " .. text(spec.eip) .. " to apply the SNAT rule"
  return hs
end
local applied = text(obj.status.internalCIDR)
if applied ~= text(spec.internalCIDR) and applied ~= text(spec.internalCIDR) .. "/32" then
  hs.status = "Progressing"
  hs.message = "Waiting for Kube-OVN to apply internalCIDR " .. text(spec.internalCIDR) ..
    " (the gateway still has " .. applied .. "; kube-ovn-controller's log says why)"
  return hs
end
hs.status = "Healthy"
hs.message = "SNAT rule is applied on " .. text(obj.status.v4ip)
return hs
