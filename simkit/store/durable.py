"""Durable containers: a list, a dict and a set kept in a SQLite table, behind the plain Python interface.

They let the very same simulation objects (the provider's fetch counters and log, the
sink's effects and handler state, the external service's request log, the store's
operation records) run durably in live mode: the object's code is unchanged, only the
containers it writes to outlive a SIGKILL. Each write is one statement; the caller wraps
a whole operation in :func:`transaction`, so that it is durable entirely or not at all.

A codec turns an item into the table's column values (``encode``) and back (``decode``); the default is the
identity on tuples. JSON columns hold nested tuples (:func:`pack` and :func:`unpack`).
"""
from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager

__all__ = ["transaction", "pack", "unpack", "DurableList", "DurableDict", "DurableSet"]


@contextmanager
def transaction(db: sqlite3.Connection):
    """``BEGIN IMMEDIATE ... COMMIT`` (``ROLLBACK`` on an exception) on a connection in autocommit mode.

    ``IMMEDIATE`` takes the write lock at once, so what the transaction reads is what it writes over. Inside a
    transaction already open, it simply joins it.
    """
    if db.in_transaction:
        yield db
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def pack(value) -> str:
    """A nested tuple (or list) as JSON text."""
    return json.dumps(value)


def unpack(text: str):
    """JSON text back to nested tuples."""
    def tup(v):
        return tuple(tup(x) for x in v) if isinstance(v, list) else v
    return tup(json.loads(text))


def _create(db: sqlite3.Connection, table: str, columns: tuple[str, ...], key: str | None = None) -> None:
    cols = ", ".join(((f"{key} PRIMARY KEY",) if key else ()) + tuple(columns))
    db.execute(f"CREATE TABLE IF NOT EXISTS {table} ({cols})")


class DurableList:
    """An append-only list in ``table`` (one row per item, in insertion order)."""

    def __init__(self, db: sqlite3.Connection, table: str, columns: tuple[str, ...], encode=tuple,
                 decode=tuple):
        _create(db, table, columns)
        self._db, self._table, self._encode, self._decode = db, table, encode, decode
        self._insert = f"INSERT INTO {table} VALUES ({', '.join('?' * len(columns))})"

    def append(self, item) -> None:
        self._db.execute(self._insert, tuple(self._encode(item)))

    def add(self, *row) -> None:
        """Append the row given column by column, as to a :class:`simkit.truth.log.Log`."""
        self.append(row)

    def __iter__(self):
        return iter([self._decode(r)
                     for r in self._db.execute(f"SELECT * FROM {self._table} ORDER BY rowid")])

    def __len__(self) -> int:
        return self._db.execute(f"SELECT count(*) FROM {self._table}").fetchone()[0]

    def __getitem__(self, index: int):
        if index != -1:
            return list(self)[index]
        row = self._db.execute(f"SELECT * FROM {self._table} ORDER BY rowid DESC LIMIT 1").fetchone()
        if row is None:
            raise IndexError("list index out of range")
        return self._decode(row)

    def __bool__(self) -> bool:
        return len(self) > 0


class DurableDict:
    """A dict in ``table``: one row per key. Values are encoded into ``columns`` (default: one column)."""

    def __init__(self, db: sqlite3.Connection, table: str, columns: tuple[str, ...] = ("value",),
                 encode=lambda v: (v,), decode=lambda r: r[0]):
        _create(db, table, columns, key="key")
        self._db, self._table, self._encode, self._decode = db, table, encode, decode
        self._put = f"INSERT OR REPLACE INTO {table} VALUES (?, {', '.join('?' * len(columns))})"

    def __getitem__(self, key):
        row = self._db.execute(f"SELECT * FROM {self._table} WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return self._decode(row[1:])

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def __setitem__(self, key, value) -> None:
        self._db.execute(self._put, (key, *self._encode(value)))

    def setdefault(self, key, default):
        if key not in self:
            self[key] = default
        return self[key]

    def __contains__(self, key) -> bool:
        return self._db.execute(f"SELECT 1 FROM {self._table} WHERE key = ?", (key,)).fetchone() is not None

    def items(self):
        return [(r[0], self._decode(r[1:]))
                for r in self._db.execute(f"SELECT * FROM {self._table} ORDER BY rowid")]

    def keys(self):
        return [k for k, _ in self.items()]

    def values(self):
        return [v for _, v in self.items()]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self) -> int:
        return self._db.execute(f"SELECT count(*) FROM {self._table}").fetchone()[0]


class DurableSet:
    """A set of JSON-encodable items (tuples included) in ``table``."""

    def __init__(self, db: sqlite3.Connection, table: str, encode=pack, decode=unpack):
        self._items = DurableDict(db, table, encode=lambda v: (1,), decode=lambda r: True)
        self._encode, self._decode = encode, decode

    def add(self, item) -> None:
        self._items[self._encode(item)] = True

    def __contains__(self, item) -> bool:
        return self._encode(item) in self._items

    def __iter__(self):
        return iter([self._decode(k) for k in self._items.keys()])

    def __len__(self) -> int:
        return len(self._items)
