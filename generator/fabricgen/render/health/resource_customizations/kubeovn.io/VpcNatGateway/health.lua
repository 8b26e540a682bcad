-- Kube-OVN VpcNatGateway, from kubeovn/kube-ovn v1.16.2: pkg/apis/kubeovn/v1/vpc-nat-gateway.go
-- (VpcNatGatewayStatus echoes the spec) and pkg/controller/vpc_nat_gateway.go
-- (handleAddOrUpdateVpcNatGw creates StatefulSet vpc-nat-gw-<name>, then patchNatGwStatus copies
-- externalSubnets and selector into the status). The status matching the spec says the
-- StatefulSet for this spec exists; the gateway pod itself is what the IptablesEIP waits for.
-- With neither externalSubnets nor selector, Kube-OVN never writes a status to wait for.
local hs = {}
local function same(a, b)
  if a == nil then
    a = {}
  end
  if b == nil then
    b = {}
  end
  if #a ~= #b then
    return false
  end
  for i = 1, #a do
    if a[i] ~= b[i] then
      return false
    end
  end
  return true
end
local status = obj.status
if status == nil then
  status = {}
end
if same(obj.spec.externalSubnets, status.externalSubnets) and same(obj.spec.selector, status.selector) then
  hs.status = "Healthy"
  hs.message = "StatefulSet vpc-nat-gw-" .. tostring(obj.metadata.name) .. " runs the current spec"
  return hs
end
hs.status = "Progressing"
hs.message = "Waiting for Kube-OVN to create StatefulSet vpc-nat-gw-" .. tostring(obj.metadata.name)
return hs
