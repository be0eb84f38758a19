-- Argo CD health of a sandbox.agents.dev Sandbox (docs/health.md), read from the conditions the operator
-- writes, as kstatus reads them: Progressing until the operator has observed the current generation,
-- Degraded while it is Stalled (Misconfigured: a refusal only a person can fix), Progressing while it is
-- Reconciling (pods coming up or stopping, a deletion under way or blocked), Suspended once a suspension
-- has stopped its pods, Healthy when Ready. Runs without
-- useOpenLibs: only the base and table libraries.
local hs = {}

local function condition(status, type)
  if status == nil or status.conditions == nil then
    return nil
  end
  for _, c in ipairs(status.conditions) do
    if c.type == type then
      return c
    end
  end
  return nil
end

local function messageOf(c)
  if c.message ~= nil and c.message ~= "" then
    return c.message
  end
  return c.reason
end

local status = obj.status
local generation = obj.metadata.generation
local observed = nil
if status ~= nil then
  observed = status.observedGeneration
end
-- Until its first status the API server returns the CRD's default, observedGeneration 0.
if observed == nil or observed == 0 or (generation ~= nil and observed ~= generation) then
  hs.status = "Progressing"
  if generation ~= nil then
    hs.message = "Waiting for the operator to observe generation " .. generation
  else
    hs.message = "Waiting for the operator to observe the sandbox"
  end
  return hs
end

local stalled = condition(status, "Stalled")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = messageOf(stalled)
  return hs
end

local reconciling = condition(status, "Reconciling")
if reconciling ~= nil and reconciling.status == "True" then
  hs.status = "Progressing"
  hs.message = messageOf(reconciling)
  return hs
end

-- Suspended (spec.operatingMode, or idle by references) with its pods stopped: Argo CD's own Suspended.
local suspended = condition(status, "Suspended")
if suspended ~= nil and suspended.status == "True" then
  hs.status = "Suspended"
  hs.message = messageOf(suspended)
  return hs
end

local ready = condition(status, "Ready")
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = messageOf(ready)
  return hs
end
if ready ~= nil then
  hs.status = "Progressing"
  hs.message = messageOf(ready)
  return hs
end

hs.status = "Progressing"
hs.message = "Waiting for the operator's conditions"
return hs
