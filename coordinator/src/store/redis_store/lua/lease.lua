-- Leases a queued match to a worker. Only matches the worker may play count:
-- those of tournaments that name no environment or name the worker's. Of
-- those, the first, unless one of the first ARGV[4] has every entrant in the
-- worker's cache, in which case the first such match. A baseline seat
-- (`baseline:NAME`, model::BASELINE_PREFIX) needs no build and always counts
-- as cached.
--
-- KEYS[1]:  arena:queue             LIST of queued match ids
-- KEYS[2]:  arena:match_seats       HASH match -> seats JSON array
-- KEYS[3]:  arena:match_state       HASH match -> state
-- KEYS[4]:  arena:match_attempt     HASH match -> attempt
-- KEYS[5]:  arena:match_lease       HASH match -> current lease id
-- KEYS[6]:  arena:match_worker      HASH match -> worker holding the lease
-- KEYS[7]:  arena:lease_match       HASH lease id -> match
-- KEYS[8]:  arena:leases            ZSET lease id scored by expiry (ms)
-- KEYS[9]:  arena:match_tournament  HASH match -> tournament
-- KEYS[10]: arena:match_round       HASH match -> round
-- KEYS[11]: arena:match_pairing     HASH match -> pairing JSON
-- KEYS[12]: arena:tournament_env    HASH tournament -> required environment id
-- ARGV[1]: worker id
-- ARGV[2]: the new lease's id (random, chosen by the coordinator)
-- ARGV[3]: expiry of the new lease (ms)
-- ARGV[4]: how many eligible matches to look through for a cached one
-- ARGV[5]: the worker's environment id
-- ARGV[6 ..]: entrant ids the worker has built
-- Returns: nil if the queue is empty, else
--   {lease id, match id, attempt, tournament, round, pairing JSON};
--   an ARENA_DUPLICATE_LEASE error if a current lease has the id.

local worker, lease = ARGV[1], ARGV[2]
if redis.call('HEXISTS', KEYS[7], lease) == 1 then
    return redis.error_reply('ARENA_DUPLICATE_LEASE ' .. lease)
end

-- Choose among the eligible matches, in queue order. The queue is read a
-- page at a time: the window usually fills from its first page, and a
-- long queue should not be copied whole for every lease.
local window = tonumber(ARGV[4])
local page = 256
local head = {}
local start = 0
repeat
    local queued = redis.call('LRANGE', KEYS[1], start, start + page - 1)
    for _, id in ipairs(queued) do
        local needs = redis.call('HGET', KEYS[12], redis.call('HGET', KEYS[9], id) or '')
        if not needs or needs == ARGV[5] then
            head[#head + 1] = id
            if #head == window then
                break
            end
        end
    end
    start = start + page
until #head == window or #queued < page
if #head == 0 then
    return false
end
local chosen = head[1]
if #ARGV >= 6 then
    local cached = {}
    for i = 6, #ARGV do
        cached[ARGV[i]] = true
    end
    for _, id in ipairs(head) do
        local seats = redis.call('HGET', KEYS[2], id)
        if seats then
            local all = true
            for _, entrant in ipairs(cjson.decode(seats)) do
                if not cached[entrant] and string.sub(entrant, 1, 9) ~= 'baseline:' then
                    all = false
                    break
                end
            end
            if all then
                chosen = id
                break
            end
        end
    end
end

-- Validate: only a queued match may sit in the queue.
if redis.call('HGET', KEYS[3], chosen) ~= 'queued' then
    return redis.error_reply('ARENA_CORRUPT queue holds ' .. chosen .. ', which is not queued')
end

-- Mutate.
redis.call('LREM', KEYS[1], 1, chosen)
redis.call('HSET', KEYS[3], chosen, 'leased')
redis.call('HSET', KEYS[5], chosen, lease)
redis.call('HSET', KEYS[6], chosen, worker)
redis.call('HSET', KEYS[7], lease, chosen)
redis.call('ZADD', KEYS[8], ARGV[3], lease)
return {
    lease,
    chosen,
    redis.call('HGET', KEYS[4], chosen),
    redis.call('HGET', KEYS[9], chosen),
    redis.call('HGET', KEYS[10], chosen),
    redis.call('HGET', KEYS[11], chosen),
}
