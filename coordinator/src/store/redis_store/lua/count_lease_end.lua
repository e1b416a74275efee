-- Not a script of its own: the function that keeps a worker's recent lease
-- endings for the quarantine, prepended to `lease_end.lua` and to the two
-- scripts that end a lease and count it in the same step (`complete.lua`,
-- `fail.lua`), so all three count alike.
--
-- key: arena:lease_ends:{worker}  LIST, newest first: '1' failed, '0' result
-- failed: '1' if this lease ended without a result, else '0'
-- window: how many recent endings to keep (at least one is)
-- Returns: how many of the kept endings failed.
local function count_lease_end(key, failed, window)
    redis.call('LPUSH', key, failed)
    redis.call('LTRIM', key, 0, math.max(1, window) - 1)
    local count = 0
    for _, ended in ipairs(redis.call('LRANGE', key, 0, -1)) do
        if ended == '1' then
            count = count + 1
        end
    end
    return count
end

