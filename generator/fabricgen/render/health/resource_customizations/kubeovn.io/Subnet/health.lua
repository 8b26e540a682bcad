-- Kube-OVN Subnet, from kubeovn/kube-ovn v1.16.2: pkg/apis/kubeovn/v1/subnet.go (SubnetStatus) and
-- pkg/controller/subnet_status.go (patchSubnetStatus), pkg/controller/subnet.go
-- (handleAddOrUpdateSubnet, validateSubnetVlan, reconcileOvnDefaultVpcRoute). The controller adds
-- Ready, Validated and Error as Unknown (EnsureStandardConditions); a failure sets Error True and
-- Ready False with its reason, and a success sets Validated True and, for the reasons that finish
-- a reconcile, Ready True. Nothing ever clears Error (SubnetStatus.ClearError has no caller), and no
-- condition carries an observedGeneration, so:
-- - Error is never read: it may be left from any earlier failure;
-- - Degraded only for what Kube-OVN cannot get past by retrying: Validated False
--   (ValidateLogicalSwitchFailed: an overlapping CIDR, a clash with a node address), a centralized
--   subnet with no gateway node at all (NoReadyGateway: Ready False, Error untouched), and a VLAN
--   that conflicts (validateSubnetVlan's "has invalid conflict vlan", told from a VLAN not found
--   yet, which Kube-OVN retries, by the whole message it writes);
-- - every other Ready False is Progressing with its reason and message: Kube-OVN requeues it
--   (an OVN transaction that failed, a VLAN created after the subnet, no gateway node Ready);
-- - an update that fails before any status patch (validateVpcBySubnet, IPAM, CreateLogicalSwitch,
--   the DHCP options) leaves Ready True from the last success, and nothing in the status tells it:
--   the Healthy message says so, and `fabricgen status` checks the subnet's router port in OVN.
local hs = {}
local function text(value)
  if value == nil then
    return ""
  end
  return tostring(value)
end
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for Kube-OVN to reconcile the subnet"
  return hs
end
local ready = nil
local validated = nil
for _, condition in ipairs(obj.status.conditions) do
  if condition.type == "Ready" then
    ready = condition
  elseif condition.type == "Validated" then
    validated = condition
  end
end
if validated ~= nil and validated.status == "False" then
  hs.status = "Degraded"
  hs.message = text(validated.reason) .. ": " .. text(validated.message)
  return hs
end
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = "Subnet is ready (Kube-OVN records no generation in its conditions: an update that failed since still reads ready; fabricgen status checks its router port in OVN)"
  return hs
end
if ready == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for Kube-OVN to set the Ready condition"
  return hs
end
local name = text(obj.metadata.name)
local vlan = ""
if obj.spec ~= nil then
  vlan = text(obj.spec.vlan)
end
local conflict = "failed to validate vlan for subnet " .. name .. ", subnet " .. name .. " has invalid conflict vlan " .. vlan
if ready.status == "False" and ready.reason == "NoReadyGateway" then
  hs.status = "Degraded"
  hs.message = "NoReadyGateway: a centralized subnet needs spec.gatewayNode or spec.gatewayNodeSelectors"
  return hs
end
if ready.status == "False" and ready.reason == "ValidateSubnetVlanFailed" and ready.message == conflict then
  hs.status = "Degraded"
  hs.message = "ValidateSubnetVlanFailed: " .. conflict
  return hs
end
hs.status = "Progressing"
hs.message = "Ready is " .. text(ready.status)
if text(ready.reason) ~= "" then
  hs.message = hs.message .. " (" .. text(ready.reason) .. ")"
end
if text(ready.message) ~= "" then
  hs.message = hs.message .. ": " .. text(ready.message)
end
if ready.status == "False" then
  hs.message = hs.message .. "; Kube-OVN retries"
end
return hs
