"""A consumer that reads the handshake, says something on stderr, and then never writes a request."""
import sys
import time

sys.stdin.readline()
sys.stderr.write("thinking...\n")
sys.stderr.flush()
time.sleep(3600)
