-- The Heartbeat call in one round trip: records that a registered worker is
-- alive and what it has built, then extends each listed lease that is still
-- live and names the others. A lease is live if it is its match's current
-- one, the match is leased (not done), its tournament is not cancelled and
-- its expiry is still after now (expired means expiry <= now, even if
-- `expire` has not swept it). A current lease may only be extended by the
-- worker it was granted to.
--
-- KEYS[1]:  arena:workers           HASH worker -> WorkerInfo JSON
-- KEYS[2]:  arena:worker_cached     HASH worker -> JSON array of entrant ids
-- KEYS[3]:  arena:worker_seen       ZSET worker scored by last heartbeat (ms)
-- KEYS[4]:  arena:lease_match       HASH lease id -> match
-- KEYS[5]:  arena:match_lease       HASH match -> current lease id
-- KEYS[6]:  arena:match_state       HASH match -> state
-- KEYS[7]:  arena:match_tournament  HASH match -> tournament
-- KEYS[8]:  arena:cancelled         SET of cancelled tournament ids
-- KEYS[9]:  arena:leases            ZSET lease id scored by expiry (ms)
-- KEYS[10]: arena:match_worker      HASH match -> worker holding the lease
-- ARGV[1]: worker id
-- ARGV[2]: now (ms)
-- ARGV[3]: JSON array of the entrants it has built
-- ARGV[4]: the leases' new expiry (ms)
-- ARGV[5 ..]: the lease ids to extend
-- Returns: {0} if the worker never registered (nothing written);
--   {-1, lease} if a listed lease is current but held by another worker
--   (the worker's liveness is recorded, no lease extended);
--   else {1, lost lease ids...}: every other listed lease was extended.

local worker = ARGV[1]

-- Validate the worker, and record it.
if redis.call('HEXISTS', KEYS[1], worker) == 0 then
    return {0}
end
redis.call('HSET', KEYS[2], worker, ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[2], worker)

-- Validate every lease before extending any.
local now = tonumber(ARGV[2])
local current = {}
local lost = {1}
for i = 5, #ARGV do
    local lease = ARGV[i]
    local live = false
    local match = redis.call('HGET', KEYS[4], lease)
    if match and redis.call('HGET', KEYS[5], match) == lease
        and redis.call('HGET', KEYS[6], match) == 'leased' then
        if redis.call('HGET', KEYS[10], match) ~= worker then
            return {-1, lease}
        end
        local tournament = redis.call('HGET', KEYS[7], match)
        local expiry = redis.call('ZSCORE', KEYS[9], lease)
        live = tournament and redis.call('SISMEMBER', KEYS[8], tournament) == 0
            and expiry and tonumber(expiry) > now
    end
    if live then
        current[#current + 1] = lease
    else
        lost[#lost + 1] = lease
    end
end

-- Mutate.
for _, lease in ipairs(current) do
    redis.call('ZADD', KEYS[9], ARGV[4], lease)
end
return lost
