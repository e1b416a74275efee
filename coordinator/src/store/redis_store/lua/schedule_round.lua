-- Schedules the next round of a tournament: records its matches and byes
-- and queues the matches at the back. Rounds go in order; scheduling a
-- round that is already scheduled changes nothing, so a restarted
-- coordinator can repeat its scheduling step.
--
-- KEYS[1]:  arena:tournaments           SET of tournament ids
-- KEYS[2]:  arena:cancelled             SET of cancelled tournament ids
-- KEYS[3]:  arena:rounds:{tournament}   STRING, rounds scheduled so far
-- KEYS[4]:  arena:matches:{tournament}  LIST of match ids, schedule order
-- KEYS[5]:  arena:byes:{tournament}     LIST of JSON [round, entrant]
-- KEYS[6]:  arena:queue                 LIST of queued match ids
-- KEYS[7]:  arena:match_tournament      HASH match -> tournament
-- KEYS[8]:  arena:match_round           HASH match -> round
-- KEYS[9]:  arena:match_pairing         HASH match -> pairing JSON
-- KEYS[10]: arena:match_seats           HASH match -> seats JSON array
-- KEYS[11]: arena:match_state           HASH match -> state
-- KEYS[12]: arena:match_attempt         HASH match -> attempt
-- ARGV[1]: tournament id
-- ARGV[2]: round (0-based)
-- ARGV[3]: n, the number of matches
-- ARGV[4 .. 3+3n]: per match, in order: match id, pairing JSON, seats JSON
-- ARGV[4+3n ..]: one JSON [round, entrant] per bye
-- Returns: {code, detail}
--   { 1, ''}       scheduled
--   { 0, ''}       this round was already scheduled; nothing written
--   {-1, ''}       unknown tournament
--   {-2, ''}       tournament cancelled
--   {-3, next}     out of order; `next` is the round that would be accepted
--   {-4, match}    match id already in use (in the store or this call)

local tournament = ARGV[1]
local round = tonumber(ARGV[2])
local n = tonumber(ARGV[3])

-- Validate.
if redis.call('SISMEMBER', KEYS[1], tournament) == 0 then
    return {-1, ''}
end
local scheduled = tonumber(redis.call('GET', KEYS[3]) or '0')
if round < scheduled then
    return {0, ''}
end
if redis.call('SISMEMBER', KEYS[2], tournament) == 1 then
    return {-2, ''}
end
if round > scheduled then
    return {-3, tostring(scheduled)}
end
local seen = {}
for i = 0, n - 1 do
    local id = ARGV[4 + 3 * i]
    if seen[id] or redis.call('HEXISTS', KEYS[7], id) == 1 then
        return {-4, id}
    end
    seen[id] = true
end

-- Mutate: one command per key for a slice of matches at a time, not one
-- per match and key (a round of a large round robin has hundreds of
-- matches; each call into Redis costs more than the field it writes).
-- Slices keep every command's argument list well inside what `unpack`
-- can pass.
local slice = 500
for first = 0, n - 1, slice do
    local last = math.min(first + slice, n) - 1
    local ids, owners, rounds, pairings, seats, states, attempts = {}, {}, {}, {}, {}, {}, {}
    for i = first, last do
        local id = ARGV[4 + 3 * i]
        local at = 2 * (i - first)
        ids[i - first + 1] = id
        owners[at + 1], owners[at + 2] = id, tournament
        rounds[at + 1], rounds[at + 2] = id, ARGV[2]
        pairings[at + 1], pairings[at + 2] = id, ARGV[5 + 3 * i]
        seats[at + 1], seats[at + 2] = id, ARGV[6 + 3 * i]
        states[at + 1], states[at + 2] = id, 'queued'
        attempts[at + 1], attempts[at + 2] = id, '1'
    end
    redis.call('HSET', KEYS[7], unpack(owners))
    redis.call('HSET', KEYS[8], unpack(rounds))
    redis.call('HSET', KEYS[9], unpack(pairings))
    redis.call('HSET', KEYS[10], unpack(seats))
    redis.call('HSET', KEYS[11], unpack(states))
    redis.call('HSET', KEYS[12], unpack(attempts))
    redis.call('RPUSH', KEYS[4], unpack(ids))
    redis.call('RPUSH', KEYS[6], unpack(ids))
end
for i = 4 + 3 * n, #ARGV do
    redis.call('RPUSH', KEYS[5], ARGV[i])
end
redis.call('SET', KEYS[3], round + 1)
return {1, ''}
