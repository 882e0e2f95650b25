-- service_wrk.lua: wrk script for bench_service.py. Sends requests round-robin over the paths listed in
-- the file named by WRK_PATHS (one session per path, so 64 connections spread over 64 sessions), with
-- method WRK_METHOD and body WRK_BODY; each wrk thread starts at its own offset in the list.
local paths = {}
for line in io.lines(os.getenv("WRK_PATHS")) do paths[#paths + 1] = line end
local method = os.getenv("WRK_METHOD") or "GET"
local body = os.getenv("WRK_BODY")
if body == "" then body = nil end
local headers = {["Content-Type"] = "application/json"}
local counter = 0
local i = 0

function setup(thread)
  thread:set("offset", counter * 17)
  counter = counter + 1
end

function init(args)
  i = offset or 0
end

request = function()
  i = i % #paths + 1
  return wrk.format(method, paths[i], headers, body)
end
