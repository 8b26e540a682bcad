-- Kube-OVN ProviderNetwork, from kubeovn/kube-ovn v1.16.2: pkg/apis/kubeovn/v1/provider-network.go
-- (ProviderNetworkStatus: one Ready condition per node, with its node) and
-- pkg/controller/provider_network.go (resyncProviderNetworkStatus: Ready True on a node whose
-- kube-ovn-cni set up the bridge, False with the error otherwise). The next stages need the
-- network on the nodes that carry it: healthy once one node is ready, naming the others; a node
-- without the interface (not cabled, not excluded) stays NotReady and would otherwise hold
-- every stage after it.
local hs = {}
local ready = {}
local waiting = {}
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, condition in ipairs(obj.status.conditions) do
    if condition.type == "Ready" then
      if condition.status == "True" then
        table.insert(ready, tostring(condition.node))
      else
        local why = condition.message
        if why == nil or why == "" then
          why = tostring(condition.reason)
        end
        table.insert(waiting, tostring(condition.node) .. " (" .. tostring(why) .. ")")
      end
    end
  end
end
if #ready == 0 then
  hs.status = "Progressing"
  if #waiting == 0 then
    hs.message = "Waiting for Kube-OVN to set up the provider network on the nodes"
  else
    hs.message = "Not ready on any node yet: " .. table.concat(waiting, ", ")
  end
  return hs
end
hs.status = "Healthy"
hs.message = "Ready on " .. table.concat(ready, ", ")
if #waiting > 0 then
  hs.message = hs.message .. "; not ready on " .. table.concat(waiting, ", ")
end
return hs
