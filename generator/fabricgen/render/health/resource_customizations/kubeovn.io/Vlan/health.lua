-- Kube-OVN Vlan, from kubeovn/kube-ovn v1.16.2: pkg/apis/kubeovn/v1/vlan.go (VlanStatus) and
-- pkg/controller/vlan.go. The controller writes a Vlan's status only when a Subnet uses it
-- (status.subnets) or when it conflicts with another Vlan of the same provider network and
-- id (status.conflict); it sets no conditions. Its readiness signal is the ProviderNetwork's
-- status.vlans, which the Subnet controller waits for itself (pkg/controller/subnet.go
-- validateSubnetVlan). So a Vlan without status is healthy: waiting for one would hold the
-- Subnets that would give it one.
local hs = {}
if obj.status ~= nil then
  if obj.status.conflict == true then
    hs.status = "Degraded"
    hs.message = "VLAN id conflicts with another Vlan of provider network " .. tostring(obj.spec.provider)
    return hs
  end
  if obj.status.conditions ~= nil then
    for _, condition in ipairs(obj.status.conditions) do
      if condition.type == "Error" and condition.status == "True" then
        hs.status = "Degraded"
        hs.message = tostring(condition.reason) .. ": " .. tostring(condition.message)
        return hs
      end
    end
  end
end
hs.status = "Healthy"
hs.message = "No VLAN conflict"
return hs
