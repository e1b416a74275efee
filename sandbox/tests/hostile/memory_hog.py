# Allocates and touches argv[1] bytes in 8 MiB chunks (each chunk is written,
# so every page is really charged), reporting progress on stderr.
import sys

target = int(sys.argv[1])
step = 8 << 20
chunks = []
total = 0
while total < target:
    chunks.append(bytearray(b"\x01") * step)
    total += step
    print(f"allocated={total}", file=sys.stderr, flush=True)
print(f"survived={total}", flush=True)
