"""A consumer that writes its requests and never flushes them: on a pipe, C's stdio (as Python's and awk's)
holds them in a block that never fills. simkit waits for a request that sits in the buffer."""
import io
import os
import sys

sys.stdin.readline()
out = io.BufferedWriter(io.FileIO(os.dup(1), "w"), buffer_size=8192)   # block-buffered whatever the env says
out.write(b'{"op": "load"}\n')             # no flush
sys.stdin.readline()
