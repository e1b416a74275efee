-- Appends chunk number ARGV[1] of an upload, once: a command retried after
-- its reply was lost (the connection failed, the response timed out) finds
-- the chunk already there and adds nothing, so every chunk sits at its own
-- index exactly once whatever the retries.
--
-- KEYS[1]: arena:upload:{upload}   LIST of the chunks written so far ({upload}:
--          the hash and a random suffix)
-- ARGV[1]: the chunk's index (0-based)
-- ARGV[2]: the chunk's bytes
-- ARGV[3]: seconds the half-written upload may live
-- Returns: the list's length afterwards; a length below the index means an
--          earlier chunk is missing (the caller gives up on the upload).

local index = tonumber(ARGV[1])
local length = redis.call('LLEN', KEYS[1])
if length == index then
    length = redis.call('RPUSH', KEYS[1], ARGV[2])
end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return length
