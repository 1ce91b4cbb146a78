"""A consumer that reads the handshake, then writes each argument as one line (``codecs.escape_decode``:
``\\xNN`` a raw byte, ``\\\\`` a backslash; ``-`` ends the arguments read as lines with no newline after the
last) and reads one line after each. Then it exits with status 0."""
import codecs
import sys

sys.stdin.buffer.readline()
args = sys.argv[1:]
ending = b"\n"
if args and args[0] == "-n":
    args, ending = args[1:], b""
for n, arg in enumerate(args, 1):
    sys.stdout.buffer.write(codecs.escape_decode(arg)[0] + (ending if n == len(args) else b"\n"))
    sys.stdout.buffer.flush()
    if not sys.stdin.buffer.readline():
        break
