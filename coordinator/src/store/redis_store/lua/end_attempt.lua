-- Shared by fail.lua and expire.lua (prepended to each when the script is
-- built): ends a leased match's attempt without a result, after its lease
-- entries are gone. It records the failure, then the match is dropped (its
-- tournament was cancelled), set aside as stuck (this was the
-- max_attempts-th failure in a row) or queued again with the next attempt
-- number; putting a queued match into the queue is the caller's job.
--
-- k: table of key names {state, attempt, failures, strikes, tournament,
--    cancelled}
-- Returns: 'dropped', 'stuck' or 'requeued'.
local function end_attempt(k, match, worker, reason, max_attempts)
    local failures = {}
    local stored = redis.call('HGET', k.failures, match)
    if stored then
        failures = cjson.decode(stored)
    end
    table.insert(failures, {
        attempt = tonumber(redis.call('HGET', k.attempt, match)),
        worker = worker,
        reason = reason,
    })
    redis.call('HSET', k.failures, match, cjson.encode(failures))
    local tournament = redis.call('HGET', k.tournament, match)
    if not tournament or redis.call('SISMEMBER', k.cancelled, tournament) == 1 then
        redis.call('HSET', k.state, match, 'dropped')
        return 'dropped'
    end
    if redis.call('HINCRBY', k.strikes, match, 1) >= math.max(1, max_attempts) then
        redis.call('HSET', k.state, match, 'stuck')
        return 'stuck'
    end
    redis.call('HSET', k.state, match, 'queued')
    redis.call('HINCRBY', k.attempt, match, 1)
    return 'requeued'
end

