-- Kube-OVN IptablesEIP, from kubeovn/kube-ovn v1.16.2: pkg/apis/kubeovn/v1/iptables-eip.go
-- (IptablesEIPStatus) and pkg/controller/vpc_nat_gw_eip.go. handleAddIptablesEip sets status.ready
-- with status.ip once the gateway pod holds the address; a restarted gateway pod sets ready false
-- with status.redo (vpc_nat_gateway.go) until the address is put back; the conditions are
-- declared but never set, and ready is never cleared by a later failure. So Healthy also needs the
-- status to echo the spec: a v4ip the gateway does not hold is requeued forever with ready left
-- true (handleUpdateIptablesEip), which only deleting and creating the object again fixes.
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
  hs.message = "Waiting for NAT gateway " .. text(spec.natGwDp) .. " to hold the elastic IP"
  if obj.status ~= nil and text(obj.status.redo) ~= "" and text(obj.status.ip) ~= "" then
    hs.message = "NAT gateway " .. text(spec.natGwDp) .. " restarted (redo " .. text(obj.status.redo) ..
      "): waiting for Kube-OVN to put elastic IP " .. text(obj.status.ip) .. " back"
  end
  return hs
end
if text(spec.v4ip) ~= "" and text(spec.v4ip) ~= text(obj.status.ip) then
  hs.status = "Degraded"
  hs.message = "spec.v4ip is " .. text(spec.v4ip) .. " but NAT gateway " .. text(spec.natGwDp) .. " holds " ..
    text(obj.status.ip) .. ": Kube-OVN never moves an elastic IP it has applied; delete the IptablesEIP and create it again"
  return hs
end
if text(spec.qosPolicy) ~= text(obj.status.qosPolicy) then
  hs.status = "Progressing"
  hs.message = "Waiting for Kube-OVN to apply qosPolicy '" .. text(spec.qosPolicy) .. "' (its status still says '" ..
    text(obj.status.qosPolicy) .. "')"
  return hs
end
hs.status = "Healthy"
hs.message = "Elastic IP " .. text(obj.status.ip) .. " is held by NAT gateway " .. text(spec.natGwDp)
return hs
