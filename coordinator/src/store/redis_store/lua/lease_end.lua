-- Records how one of a worker's leases ended and counts its recent failures.
--
-- KEYS[1]: arena:lease_ends:{worker}  LIST, newest first: 1 failed, 0 result
-- ARGV[1]: 1 if this lease ended without a result, else 0
-- ARGV[2]: how many recent leases to keep
-- Returns: how many of the kept leases failed.

redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, math.max(1, tonumber(ARGV[2])) - 1)
local failed = 0
for _, ended in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
    if ended == '1' then
        failed = failed + 1
    end
end
return failed
