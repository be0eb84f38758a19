-- Argo CD health of a sandbox.agents.dev SessionReference (docs/health.md). A reference is a record that a
-- session uses a sandbox: nothing reconciles it towards a desired state, so it is Healthy as soon as it
-- exists, Attached or Detached (a tombstone, which still blocks the sandbox's destruction). The message says
-- which, the latest turn, and processes the shell reaper could not end (also a ShellsUnreachable Event).
-- Runs without useOpenLibs: only the base and table libraries.
local hs = { status = "Healthy" }
local spec = obj.spec or {}
local state = spec.state or "Attached"
local sandbox = spec.sandbox or "?"

if state == "Detached" then
  hs.message = "Detached from sandbox " .. sandbox .. " (a tombstone: it blocks the sandbox's destruction until forgotten)"
else
  hs.message = "Attached to sandbox " .. sandbox
end

local status = obj.status
if status ~= nil and status.turn ~= nil and status.turn.id ~= nil then
  hs.message = hs.message .. "; turn " .. status.turn.id .. " " .. (status.turn.phase or "")
end
if status ~= nil and status.shells ~= nil and status.shells.unreachable ~= nil and status.shells.unreachable > 0 then
  hs.message = hs.message .. "; " .. status.shells.unreachable ..
    " process(es) of turn " .. (status.shells.retiredTurn or "?") .. " could not be ended"
end
return hs
