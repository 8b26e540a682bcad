-- SUSE Virtualization's kubeovn-operator Configuration, from harvester/kubeovn-operator
-- api/v1/configuration_types.go (ConfigurationStatus, the condition names) and
-- internal/controller/configuration_controller.go (status.status Deployed once every Kube-OVN
-- object is applied; waitingForMatchignNodes while no node matches spec.masterNodesLabel) and
-- internal/controller/healthcheck_controller.go (after Deployed: leader and health of the OVN
-- northbound and southbound databases).
local hs = {}
local checks = {"ovnNorthDBLeaderFound", "ovnSouthDBLeaderFound", "ovnNBDBHealth", "ovnSBDBHealth"}
local found = {}
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, condition in ipairs(obj.status.conditions) do
    found[condition.type] = condition
  end
end
if obj.status == nil or obj.status.status ~= "Deployed" then
  hs.status = "Progressing"
  local waiting = found["waitingForMatchignNodes"]
  if waiting ~= nil and waiting.status == "True" then
    hs.message = "Waiting for nodes matching spec.masterNodesLabel"
  else
    hs.message = "Waiting for the kubeovn-operator to deploy Kube-OVN"
  end
  return hs
end
local pending = {}
for _, name in ipairs(checks) do
  local condition = found[name]
  if condition ~= nil and condition.status == "False" then
    hs.status = "Degraded"
    hs.message = name .. ": " .. tostring(condition.message)
    return hs
  end
  if condition == nil or condition.status ~= "True" then
    table.insert(pending, name)
  end
end
if #pending > 0 then
  hs.status = "Progressing"
  hs.message = "Waiting for " .. table.concat(pending, ", ")
  return hs
end
hs.status = "Healthy"
hs.message = "Kube-OVN is deployed and its databases are healthy"
return hs
