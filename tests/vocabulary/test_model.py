"""The records of a run: frozen (a consumer cannot change durable state behind the store's back), compared and
hashed by value, and built only from plain fields."""
import dataclasses
import pickle

import pytest

from simkit.model import Checkpoint, Event, record
from simkit.ops import Commit


def test_records_are_frozen_values():
    cp = Checkpoint("C7", 105, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cp.resume_cursor = "C8"
    assert cp == Checkpoint("C7", 105, 1) and hash(cp) == hash(Checkpoint("C7", 105, 1))
    assert dataclasses.replace(cp, checkpoint_version=2) == Checkpoint("C7", 105, 2)
    op = Commit(Event("e107", 107), "applied", 107)
    assert op.with_effect is False and pickle.loads(pickle.dumps(op)) == op


def test_record_refuses_fields_its_init_cannot_honour():
    with pytest.raises(TypeError, match="default_factory"):
        @record
        class WithFactory:
            items: list = dataclasses.field(default_factory=list)
    with pytest.raises(TypeError, match="__post_init__"):
        @record
        class WithPostInit:
            x: int

            def __post_init__(self):
                pass
