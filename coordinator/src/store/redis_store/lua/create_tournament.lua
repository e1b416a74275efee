-- Creates a tournament unless its id is taken.
--
-- KEYS[1]: arena:tournaments        SET of tournament ids
-- KEYS[2]: arena:spec:{tournament}  STRING, the spec JSON
-- KEYS[3]: arena:cancelled          SET of cancelled tournament ids
-- KEYS[4]: arena:tournament_env     HASH tournament -> required environment id
-- KEYS[5]: arena:tournament_wasm    HASH tournament -> required wasm runtime
-- KEYS[6]: arena:wasm_submissions   SET of submissions that are wasm bots
-- KEYS[7]: arena:tournament_model   HASH tournament -> required model runtime
-- KEYS[8]: arena:model_submissions  SET of submissions that are model bots
-- ARGV[1]: tournament id
-- ARGV[2]: spec JSON
-- ARGV[3]: "1" to create it already cancelled, "0" otherwise
-- ARGV[4]: the environment id its matches need, "" for any
-- ARGV[5]: the wasm runtime its wasm seats need, "" for any
-- ARGV[6]: the model runtime its model seats need, "" for any
-- ARGV[7]: how many of the entrants that follow are wasm bots (n)
-- ARGV[8 .. 7 + n]: its entrants that are wasm bots (none: no wasm
--   requirement)
-- ARGV[8 + n ..]: its entrants that are model bots (none: no model
--   requirement)
-- Returns: 1 if created, 0 if the id was taken (nothing written).

local id = ARGV[1]

-- Validate.
if redis.call('SISMEMBER', KEYS[1], id) == 1 then
    return 0
end

-- Mutate.
redis.call('SET', KEYS[2], ARGV[2])
redis.call('SADD', KEYS[1], id)
if ARGV[3] == '1' then
    redis.call('SADD', KEYS[3], id)
end
if ARGV[4] ~= '' then
    redis.call('HSET', KEYS[4], id, ARGV[4])
end
local wasm = tonumber(ARGV[7])
local first_model = 8 + wasm
if wasm > 0 then
    redis.call('HSET', KEYS[5], id, ARGV[5])
    redis.call('SADD', KEYS[6], unpack(ARGV, 8, first_model - 1))
end
if #ARGV >= first_model then
    redis.call('HSET', KEYS[7], id, ARGV[6])
    redis.call('SADD', KEYS[8], unpack(ARGV, first_model))
end
return 1
