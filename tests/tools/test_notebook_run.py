"""The kernel's channels polled in slices (simkit.tools.notebook_run): a wait of the whole timeout is cut into
waits of at most a second, each of which polls the channel again, and the timeout is kept."""
import asyncio
from queue import Empty

import pytest

from simkit.tools.notebook_run import SLICE, in_slices


def channel(answer_on: int | None):
    """A channel's ``get_msg`` answering on its ``answer_on``-th call (never: ``None``), noting each wait."""
    waits: list[float | None] = []

    async def get_msg(timeout=None):
        waits.append(timeout)
        if answer_on is not None and len(waits) >= answer_on:
            return {"msg_type": "execute_reply"}
        raise Empty

    return get_msg, waits


def test_a_reply_missed_by_one_wait_is_found_by_the_next():
    get_msg, waits = channel(answer_on=3)
    assert asyncio.run(in_slices(get_msg)(timeout=600)) == {"msg_type": "execute_reply"}
    assert len(waits) == 3 and all(w is not None and 0 <= w <= SLICE for w in waits)


def test_no_timeout_waits_in_slices_for_ever_until_the_reply():
    get_msg, waits = channel(answer_on=5)
    asyncio.run(in_slices(get_msg)())
    assert waits == [SLICE] * 5


def test_the_timeout_is_kept():
    get_msg, waits = channel(answer_on=None)
    with pytest.raises(Empty):
        asyncio.run(in_slices(get_msg)(timeout=0.0))
    assert waits == [0.0]
