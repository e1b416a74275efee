-- Gives up a match's current attempt after an infrastructure failure (not
-- the bots' fault): if the lease is current and the caller holds it, the
-- attempt ends as end_attempt says. When given a quarantine window, it also
-- counts the lease as failed for the worker (`count_lease_end.lua`) and
-- quarantines the worker once enough of its recent leases failed, all in
-- the same step.
--
-- KEYS[1]:  arena:match_state       HASH match -> state
-- KEYS[2]:  arena:match_lease       HASH match -> current lease id
-- KEYS[3]:  arena:match_worker      HASH match -> worker holding the lease
-- KEYS[4]:  arena:lease_match       HASH lease id -> match
-- KEYS[5]:  arena:leases            ZSET lease id scored by expiry (ms)
-- KEYS[6]:  arena:match_attempt     HASH match -> attempt
-- KEYS[7]:  arena:match_tournament  HASH match -> tournament
-- KEYS[8]:  arena:cancelled         SET of cancelled tournament ids
-- KEYS[9]:  arena:queue             LIST of queued match ids
-- KEYS[10]: arena:match_failures    HASH match -> JSON array of failures
-- KEYS[11]: arena:match_strikes     HASH match -> failures in a row
-- KEYS[12]: arena:lease_ends:{worker}  LIST, the calling worker's endings
-- KEYS[13]: arena:quarantined       SET of quarantined worker ids
-- ARGV[1]: match id
-- ARGV[2]: lease id
-- ARGV[3]: reason
-- ARGV[4]: the calling worker
-- ARGV[5]: how many failures in a row make the match stuck
-- ARGV[6]: the quarantine window to count the failure in; "0": none
-- ARGV[7]: how many failures in that window quarantine the worker
-- Returns: {0, 0} if the lease is not current, {-1, 0} if it is held by
--          another worker (nothing written for either); else {1, q}
--          requeued, {2, q} stuck, {3, q} dropped, where q is 1 if the
--          worker's failures reached the quarantine count, else 0.

local match, lease, worker = ARGV[1], ARGV[2], ARGV[4]

-- Validate.
if redis.call('HGET', KEYS[1], match) ~= 'leased' then
    return {0, 0}
end
if redis.call('HGET', KEYS[2], match) ~= lease then
    return {0, 0}
end
if redis.call('HGET', KEYS[3], match) ~= worker then
    return {-1, 0}
end

-- Mutate.
redis.call('HDEL', KEYS[2], match)
redis.call('HDEL', KEYS[3], match)
redis.call('HDEL', KEYS[4], lease)
redis.call('ZREM', KEYS[5], lease)
local keys = {
    state = KEYS[1], attempt = KEYS[6], failures = KEYS[10], strikes = KEYS[11],
    tournament = KEYS[7], cancelled = KEYS[8],
}
local ended = end_attempt(keys, match, worker, ARGV[3], tonumber(ARGV[5]))
if ended == 'requeued' then
    redis.call('LPUSH', KEYS[9], match)
end
local quarantined = 0
local window = tonumber(ARGV[6])
if window > 0 and count_lease_end(KEYS[12], '1', window) >= tonumber(ARGV[7]) then
    redis.call('SADD', KEYS[13], worker)
    quarantined = 1
end
local code = 3
if ended == 'requeued' then
    code = 1
elseif ended == 'stuck' then
    code = 2
end
return {code, quarantined}
