-- argoproj.io Application: the check Argo CD removed from its defaults in 1.8 and documents for
-- app-of-apps with sync waves (argoproj/argo-cd docs/operator-manual/health.md, "Argocd App"):
-- the parent waits for a child Application's own health before its next wave.
hs = {}
hs.status = "Progressing"
hs.message = ""
if obj.status ~= nil then
  if obj.status.health ~= nil then
    hs.status = obj.status.health.status
    if obj.status.health.message ~= nil then
      hs.message = obj.status.health.message
    end
  end
end
return hs
