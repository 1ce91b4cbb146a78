"""Durable state: what survives a crash.

============  ==========================================================================================
module        owns
============  ==========================================================================================
memory        :class:`MemoryStore`: checkpoint compare-and-swap, receipts, atomic event commits
sqlite        the same store on SQLite (``store = "sqlite"``)
sql           the schema and statements of that store, in SQL a reader can take home
durable       a list, a dict and a set kept in a SQLite table
settlement    the fenced settlement ledger of retryable external calls, and its unsafe policies
limits        what either store can hold, refused by both alike before they write (issue 32)
============  ==========================================================================================
"""
__all__: list[str] = []     # the modules are the API
