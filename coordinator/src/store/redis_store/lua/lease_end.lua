-- Records how one of a worker's leases ended and counts its recent failures,
-- as `count_lease_end.lua` (prepended) does.
--
-- KEYS[1]: arena:lease_ends:{worker}  LIST, newest first: 1 failed, 0 result
-- ARGV[1]: 1 if this lease ended without a result, else 0
-- ARGV[2]: how many recent leases to keep
-- Returns: how many of the kept leases failed.

return count_lease_end(KEYS[1], ARGV[1], tonumber(ARGV[2]))
