-- Kube-OVN Subnet, from kubeovn/kube-ovn v1.16.2: pkg/apis/kubeovn/v1/subnet.go (SubnetStatus) and
-- pkg/controller/subnet_status.go (patchSubnetStatus). The controller adds the conditions Ready,
-- Validated and Error as Unknown (EnsureStandardConditions), sets Ready True once the logical
-- switch, its gateway and ACLs are in place, and on a failure sets Error True and Ready False.
-- Ready decides: an Error left True by an earlier failure does not make a ready subnet degraded.
-- The conditions carry no observedGeneration, so a spec change is not seen here.
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
local failure = nil
for _, condition in ipairs(obj.status.conditions) do
  if condition.type == "Ready" then
    ready = condition
  elseif condition.type == "Error" and condition.status == "True" then
    failure = condition
  end
end
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = "Subnet is ready"
  return hs
end
if failure ~= nil then
  hs.status = "Degraded"
  hs.message = text(failure.reason) .. ": " .. text(failure.message)
  return hs
end
hs.status = "Progressing"
if ready == nil then
  hs.message = "Waiting for Kube-OVN to set the Ready condition"
else
  hs.message = "Ready is " .. text(ready.status)
  if text(ready.reason) ~= "" then
    hs.message = hs.message .. " (" .. text(ready.reason) .. ")"
  end
  if text(ready.message) ~= "" then
    hs.message = hs.message .. ": " .. text(ready.message)
  end
end
return hs
