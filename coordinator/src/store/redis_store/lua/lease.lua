-- Leases a queued match to a worker whose cache and environment the caller
-- passes in; `take.lua` (prepended) chooses the match. The coordinator
-- itself uses `lease_worker.lua`, which reads both and checks the worker in
-- the same step; this form serves callers that hold a worker's details.
--
-- KEYS[1 .. 12]: as in take.lua
-- ARGV[1]: worker id
-- ARGV[2]: the new lease's id (random, chosen by the coordinator)
-- ARGV[3]: expiry of the new lease (ms)
-- ARGV[4]: how many eligible matches to look through for a cached one
-- ARGV[5]: the worker's environment id
-- ARGV[6 ..]: entrant ids the worker has built
-- Returns: what take() returns.

local cached = {}
for i = 6, #ARGV do
    cached[ARGV[i]] = true
end
return take(ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], cached, #ARGV >= 6)
