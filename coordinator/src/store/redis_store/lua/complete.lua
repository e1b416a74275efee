-- Records a match's result if it is the first valid one: the match is not
-- done and the reporting lease is its current one. Repeats of an accepted
-- report, and reports under a lease that expired or failed, change nothing.
-- A current lease may only be reported on by the worker it was granted to.
--
-- It is the ReportResult call in one step: it also refuses a record that
-- seats other entrants than the match (so the caller need not read the
-- pairing first), and counts an accepted result as a lease that ended well
-- for the worker's quarantine window (`count_lease_end.lua`, prepended).
--
-- KEYS[1]:  arena:match_tournament     HASH match -> tournament (existence)
-- KEYS[2]:  arena:match_state          HASH match -> state
-- KEYS[3]:  arena:match_lease          HASH match -> current lease id
-- KEYS[4]:  arena:match_worker         HASH match -> worker holding the lease
-- KEYS[5]:  arena:lease_match          HASH lease id -> match
-- KEYS[6]:  arena:leases               ZSET lease id scored by expiry (ms)
-- KEYS[7]:  arena:results              HASH match -> MatchRecord JSON
-- KEYS[8]:  arena:replay:{match}       STRING, the replay
-- KEYS[9]:  arena:match_seats          HASH match -> seats JSON array
-- KEYS[10]: arena:match_pairing        HASH match -> pairing JSON (seats of a
--                                      match scheduled before match_seats)
-- KEYS[11]: arena:lease_ends:{worker}  LIST, the reporting worker's endings
-- ARGV[1]: match id
-- ARGV[2]: lease id
-- ARGV[3]: MatchRecord JSON
-- ARGV[4]: "1" if ARGV[5] holds a replay, "0" if there is none
-- ARGV[5]: replay bytes (empty when ARGV[4] is "0")
-- ARGV[6]: the reporting worker
-- ARGV[7]: the quarantine window to count an accepted result in; "0": none
-- ARGV[8 ..]: the record's entrant ids in seat order
-- Returns: 0 accepted, 1 duplicate (already done), 2 stale lease,
--          3 unknown match, 4 current lease held by another worker,
--          5 the record's seats are not the match's. Only 0 wrote anything.

local match, lease = ARGV[1], ARGV[2]

-- Validate: the seats first, as a record that does not fit its match is
-- refused whatever state the match is in.
if redis.call('HEXISTS', KEYS[1], match) == 0 then
    return 3
end
local stored = redis.call('HGET', KEYS[9], match)
local seats
if stored then
    seats = cjson.decode(stored)
else
    seats = cjson.decode(redis.call('HGET', KEYS[10], match) or '{}')['seats'] or {}
end
if #seats ~= #ARGV - 7 then
    return 5
end
for i, entrant in ipairs(seats) do
    if entrant ~= ARGV[7 + i] then
        return 5
    end
end
local state = redis.call('HGET', KEYS[2], match)
if state == 'done' then
    return 1
end
if state ~= 'leased' or redis.call('HGET', KEYS[3], match) ~= lease then
    return 2
end
if redis.call('HGET', KEYS[4], match) ~= ARGV[6] then
    return 4
end

-- Mutate.
redis.call('HSET', KEYS[7], match, ARGV[3])
if ARGV[4] == '1' then
    redis.call('SET', KEYS[8], ARGV[5])
else
    -- A rejudged match's old replay must not stand for the new result.
    redis.call('DEL', KEYS[8])
end
redis.call('HSET', KEYS[2], match, 'done')
redis.call('HDEL', KEYS[3], match)
redis.call('HDEL', KEYS[4], match)
redis.call('HDEL', KEYS[5], lease)
redis.call('ZREM', KEYS[6], lease)
local window = tonumber(ARGV[7])
if window > 0 then
    count_lease_end(KEYS[11], '0', window)
end
return 0
