-- Not a script of its own: the function that picks a queued match and
-- leases it, prepended to `lease_worker.lua`, which checks the worker and
-- reads its cache, environment and wasm and model runtimes first. It uses
-- that script's first twelve KEYS and its last four:
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
-- KEYS[17]: arena:wasm_submissions  SET of submissions that are wasm bots
-- KEYS[18]: arena:tournament_wasm   HASH tournament -> required wasm runtime
-- KEYS[19]: arena:model_submissions SET of submissions that are model bots
-- KEYS[20]: arena:tournament_model  HASH tournament -> required model runtime
--
-- Only matches the worker may play count: those of tournaments that name no
-- environment or name the worker's, and of those, a match with a seat that
-- is a wasm bot only if its tournament (one with a field in KEYS[18]) needs
-- the worker's wasm runtime (`wasm`, '' for none), or any runtime (''), and
-- the worker has one; likewise a match with a seat that is a model bot
-- (KEYS[19], KEYS[20]) and the worker's model runtime (`model`). A match
-- with seats of both kinds needs both. Of those, the first, unless one of the
-- first `window` has every entrant in `cached` (a set: entrant -> true), in
-- which case the first such match. A baseline seat (`baseline:NAME`,
-- domain::BASELINE_PREFIX) needs no build and always counts as cached.
--
-- Returns false if no match is eligible, else
--   {lease id, match id, attempt, tournament, round, pairing JSON};
--   an ARENA_DUPLICATE_LEASE error if a current lease has the id.
-- The cost is bounded by the window, not the queue's length, as long as
-- the queue's head holds matches this worker may play.

-- Whether a worker with runtime `runtime` ('' for none) of one kind may
-- play match `id` of `tournament` as far as its seats of that kind go:
-- `needs_key` maps tournaments to the runtime they need, `bots_key` holds
-- the submissions of that kind.
local function runtime_allows(id, tournament, runtime, needs_key, bots_key)
    local needs = redis.call('HGET', needs_key, tournament)
    if not needs or (runtime ~= '' and (needs == '' or needs == runtime)) then
        return true
    end
    local seats = redis.call('HGET', KEYS[2], id)
    if seats then
        for _, entrant in ipairs(cjson.decode(seats)) do
            if redis.call('SISMEMBER', bots_key, entrant) == 1 then
                return false
            end
        end
    end
    return true
end

local function take(worker, lease, expires, window, environment, wasm, model, cached, any_cached)
    if redis.call('HEXISTS', KEYS[7], lease) == 1 then
        return redis.error_reply('ARENA_DUPLICATE_LEASE ' .. lease)
    end

    -- Without a cache there is nothing to prefer: the first eligible match
    -- is the one.
    if not any_cached then
        window = 1
    end

    -- Choose among the eligible matches, in queue order. The queue is read
    -- a page at a time: the window usually fills from its first page, and
    -- a long queue should not be copied whole for every lease.
    local page = math.max(window, 32)
    local head = {}
    local start = 0
    repeat
        local queued = redis.call('LRANGE', KEYS[1], start, start + page - 1)
        for _, id in ipairs(queued) do
            local tournament = redis.call('HGET', KEYS[9], id) or ''
            local needs = redis.call('HGET', KEYS[12], tournament)
            if (not needs or needs == environment)
                and runtime_allows(id, tournament, wasm, KEYS[18], KEYS[17])
                and runtime_allows(id, tournament, model, KEYS[20], KEYS[19]) then
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
    if any_cached then
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
    redis.call('ZADD', KEYS[8], expires, lease)
    return {
        lease,
        chosen,
        redis.call('HGET', KEYS[4], chosen),
        redis.call('HGET', KEYS[9], chosen),
        redis.call('HGET', KEYS[10], chosen),
        redis.call('HGET', KEYS[11], chosen),
    }
end
