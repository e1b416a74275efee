-- The Lease call in one step: checks that the worker is registered, alive
-- and not quarantined, reads its environment, wasm and model runtimes and
-- build cache, and leases it
-- a match as `take.lua` (prepended) chooses. One round trip, and no gap
-- between the checks and the lease in which a quarantine could slip by.
--
-- KEYS[1 .. 12]: as in take.lua
-- KEYS[13]: arena:workers        HASH worker -> WorkerInfo JSON
-- KEYS[14]: arena:worker_seen    ZSET worker scored by last heartbeat (ms)
-- KEYS[15]: arena:quarantined    SET of quarantined worker ids
-- KEYS[16]: arena:worker_cached  HASH worker -> JSON array of entrant ids
-- KEYS[17 .. 20]: as in take.lua
-- ARGV[1]: worker id
-- ARGV[2]: the new lease's id (random, chosen by the coordinator)
-- ARGV[3]: expiry of the new lease (ms)
-- ARGV[4]: how many eligible matches to look through for a cached one
-- ARGV[5]: the oldest last-heard-from time (ms) at which a worker is alive
-- Returns: {'unregistered'} if the worker never registered or is not alive,
--   {'quarantined'} if it is quarantined (nothing written in either case),
--   else what take() returns.

local worker = ARGV[1]

-- Validate.
local info = redis.call('HGET', KEYS[13], worker)
local seen = redis.call('ZSCORE', KEYS[14], worker)
if not info or not seen or tonumber(seen) < tonumber(ARGV[5]) then
    return {'unregistered'}
end
if redis.call('SISMEMBER', KEYS[15], worker) == 1 then
    return {'quarantined'}
end
local registered = cjson.decode(info)
local environment = registered['environment_id']
if type(environment) ~= 'string' then
    environment = ''
end
-- Workers registered before workers named one run no wasm.
local wasm = registered['wasm_runtime']
if type(wasm) ~= 'string' then
    wasm = ''
end
-- Workers registered before workers named one play no models.
local model = registered['model_runtime']
if type(model) ~= 'string' then
    model = ''
end
local cached = {}
local any_cached = false
local built = redis.call('HGET', KEYS[16], worker)
if built then
    for _, entrant in ipairs(cjson.decode(built)) do
        cached[entrant] = true
        any_cached = true
    end
end

return take(worker, ARGV[2], ARGV[3], tonumber(ARGV[4]), environment, wasm, model, cached,
    any_cached)
