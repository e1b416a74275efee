-- Puts a finished match back at the front of the queue with the next
-- attempt number (an organiser's rejudge). Its result and replay stay, and
-- count, until the new result replaces them (`complete.lua`): a rejudge
-- that never gets played loses nothing.
--
-- KEYS[1]: arena:match_tournament  HASH match -> tournament (existence)
-- KEYS[2]: arena:match_state       HASH match -> state
-- KEYS[3]: arena:match_attempt     HASH match -> attempt
-- KEYS[4]: arena:match_strikes     HASH match -> failures in a row
-- KEYS[5]: arena:cancelled         SET of cancelled tournament ids
-- KEYS[6]: arena:queue             LIST of queued match ids
-- KEYS[7]: arena:results           HASH match -> MatchRecord JSON (kept)
-- KEYS[8]: arena:replay:{match}    STRING, the replay (kept)
-- ARGV[1]: match id
-- Returns: 1 rejudged, 0 not done, -1 unknown match, -2 its tournament is
--          cancelled (nothing written unless 1).

local match = ARGV[1]

-- Validate.
local tournament = redis.call('HGET', KEYS[1], match)
if not tournament then
    return -1
end
if redis.call('HGET', KEYS[2], match) ~= 'done' then
    return 0
end
if redis.call('SISMEMBER', KEYS[5], tournament) == 1 then
    return -2
end

-- Mutate.
redis.call('HSET', KEYS[2], match, 'queued')
redis.call('HINCRBY', KEYS[3], match, 1)
redis.call('HSET', KEYS[4], match, 0)
redis.call('LPUSH', KEYS[6], match)
return 1
