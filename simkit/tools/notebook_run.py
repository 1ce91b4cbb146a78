"""A notebook executed as the benchmark and the attendee edition's test run it: nbclient, a fresh kernel, in a
folder of one's choice, each wait for the kernel's messages polled in slices (:func:`executed`)."""
from __future__ import annotations

from pathlib import Path
from queue import Empty
from time import monotonic

__all__ = ["SLICE", "executed", "in_slices"]

#: The longest one wait for a kernel's message lasts before the channel is polled again (seconds).
SLICE = 1.0


def in_slices(get_msg):
    """``get_msg`` of a kernel client's channel, with the same timeout, polling at most :data:`SLICE` at a
    time. nbclient waits for a cell's reply with one poll of the whole timeout, and the wake-up of a reply
    that arrives while the IOPub task is busy with many messages (a widget's outputs) is sometimes lost in
    zmq.asyncio: the poll then returns the reply only when the timeout runs out. The explorer's cell of
    notebook 01, 2 s, took exactly 600 s and passed; the kernel had replied and sat idle. Each slice that ends
    polls the socket itself, so a lost wake-up costs a slice; the timeout is the cell's, as before."""
    async def sliced(timeout=None):
        deadline = None if timeout is None else monotonic() + timeout
        while True:
            left = SLICE if deadline is None else min(SLICE, max(0.0, deadline - monotonic()))
            try:
                return await get_msg(timeout=left)
            except Empty:
                if deadline is not None and monotonic() >= deadline:
                    raise
    return sliced


def executed(nb, folder: Path, timeout: int):
    """``nb`` (an nbformat notebook) executed in place in ``folder``, each cell within ``timeout`` seconds;
    returns it, with its outputs."""
    from nbclient import NotebookClient
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}})

    def polled_in_slices(notebook) -> None:
        kc = client.kc
        assert kc is not None                   # (nbclient starts the kernel's client before this hook)
        for channel in (kc.shell_channel, kc.iopub_channel):
            channel.get_msg = in_slices(channel.get_msg)
    client.on_notebook_start = polled_in_slices
    client.execute()
    return nb
