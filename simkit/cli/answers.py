"""The command's end of the pipe a command's work answers on (:func:`~simkit.cli.contained.within`), read
without blocking."""
from __future__ import annotations

import os
import struct

from simkit.errors import SimkitError

__all__ = ["Answers"]


class Answers:
    """The command's end of the pipe the work answers on, read without blocking: a consumer may write on it
    too (it inherited it), and a blocking ``Connection.recv`` of a message whose head it wrote, and whose rest
    never came, held the command past its budget. Messages are multiprocessing's frames (a length, then a
    pickle); a length past ``most`` bytes (the work's memory bound) is one line."""

    def __init__(self, fd: int, most: int, who: str):
        self.fd, self.most, self.who = fd, most, who
        os.set_blocking(fd, False)
        self.buffer = bytearray()
        self.eof = False

    def fileno(self) -> int:
        return self.fd

    def pump(self) -> None:
        """Read what the pipe holds now (one read: the caller watches its clocks between reads)."""
        if self.eof or self.fd < 0:
            return
        try:
            data = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.eof = True
        self.buffer += data

    def message(self) -> bytes | None:
        """The next whole message, or None while it is not all there."""
        if len(self.buffer) < 4:
            return None
        size, head = struct.unpack("!i", self.buffer[:4])[0], 4
        if size == -1:                          # a long one: an 8-byte length follows
            if len(self.buffer) < 12:
                return None
            size, head = struct.unpack("!Q", self.buffer[4:12])[0], 12
        if not 0 <= size <= self.most:
            raise SimkitError(f"{self.who}: the work's answer would be {size} bytes, more than the "
                              f"{self.most >> 20} MiB its processes may use (--max-memory): did the consumer "
                              "write on a file descriptor it did not open?")
        if len(self.buffer) < head + size:
            return None
        out = bytes(self.buffer[head:head + size])
        del self.buffer[:head + size]
        return out

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
