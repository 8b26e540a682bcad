-- Kube-OVN Vpc, from kubeovn/kube-ovn v1.16.2: pkg/apis/kubeovn/v1/vpc.go (VpcStatus) and
-- pkg/controller/vpc.go (handleAddOrUpdateVpc sets status.standby once the logical router, its
-- static and policy routes are in place). The Subnet controller waits for standby itself
-- (pkg/controller/subnet.go), so that is what the next stage needs.
local hs = {}
if obj.status ~= nil and obj.status.standby == true then
  hs.status = "Healthy"
  hs.message = "Logical router " .. tostring(obj.status.router) .. " is ready"
  return hs
end
hs.status = "Progressing"
hs.message = "Waiting for Kube-OVN to create the VPC's logical router"
return hs
