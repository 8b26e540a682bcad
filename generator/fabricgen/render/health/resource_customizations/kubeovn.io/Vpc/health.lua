-- Kube-OVN Vpc, from kubeovn/kube-ovn v1.16.2: pkg/apis/kubeovn/v1/vpc.go (VpcStatus) and
-- pkg/controller/vpc.go. handleAddOrUpdateVpc sets status.standby once the logical router, its
-- static and policy routes are in place; the Subnet controller waits for it. Nothing ever sets it
-- back to false: an update that fails later (a route OVN refuses, a missing external subnet)
-- returns before the status patch and leaves it true, and the declared conditions are never set.
-- What the status echoes of the spec tells an update applied from one not yet applied:
-- enableExternal and enableBfd (updateVpcExternalStatus, after handleUpdateVpcExternal succeeds).
-- Routes have no echo; `fabricgen status` compares them on the router itself.
local hs = {}
local function flag(t, key)
  return t ~= nil and t[key] == true
end
if obj.status == nil or obj.status.standby ~= true then
  hs.status = "Progressing"
  hs.message = "Waiting for Kube-OVN to create the VPC's logical router"
  return hs
end
local spec = obj.spec
for _, key in ipairs({"enableExternal", "enableBfd"}) do
  if (key == "enableExternal" or flag(spec, "enableExternal")) and flag(spec, key) ~= flag(obj.status, key) then
    hs.status = "Progressing"
    hs.message = "Waiting for Kube-OVN to apply " .. key .. ": " .. tostring(flag(spec, key)) ..
      " (its status still says " .. tostring(flag(obj.status, key)) .. "; kube-ovn-controller's log says why)"
    return hs
  end
end
hs.status = "Healthy"
hs.message = "Logical router " .. tostring(obj.status.router) .. " is ready"
return hs
