-- Kube-OVN IptablesDnatRule, from kubeovn/kube-ovn v1.16.2: pkg/apis/kubeovn/v1/iptables-dnat-rule.go
-- (IptablesDnatRuleStatus) and pkg/controller/vpc_nat_gw_nat.go. patchDnatStatus sets status.ready
-- once the rule is in the NAT gateway pod, and copies the protocol, internal address and ports it
-- applied into the status; a changed rule goes ready false, is replaced, then ready true with the
-- new values (handleUpdateIptablesDnatRule), but a failure before that leaves ready true with the
-- old ones, and the declared conditions are never set. So Healthy also needs the status to echo
-- the spec.
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
  hs.message = "Waiting for the NAT gateway of elastic IP " .. text(spec.eip) .. " to apply the DNAT rule"
  return hs
end
for _, key in ipairs({"protocol", "internalIp", "internalPort", "externalPort"}) do
  if text(spec[key]) ~= text(obj.status[key]) then
    hs.status = "Progressing"
    hs.message = "Waiting for Kube-OVN to apply " .. key .. " " .. text(spec[key]) .. " (the gateway still has " ..
      text(obj.status[key]) .. "; kube-ovn-controller's log says why)"
    return hs
  end
end
hs.status = "Healthy"
hs.message = "DNAT rule is applied on " .. text(obj.status.v4ip)
return hs
