"""Scenarios: the TOML files that describe a world, and the ones simkit ships.

============  ==========================================================================================
module        owns
============  ==========================================================================================
read          :func:`load`, :func:`parse`, :func:`bundled`: a file in, a validated Scenario out; answers the
              public names of checks and faults
checks        the rules of each table (:class:`Checker`, one key at a time) and the limits (``MAX_INT`` ...)
stream        the rules that join tables: cursors name pages, ids keep one position, and which positions a
              stream carries (:func:`missing_position`)
faults        :func:`parse_fault` (a ``[[faults]]`` table), :func:`parse_crash_arg` (``--crash POINT@POS#N``)
start         :func:`check_start`: ``[initial]`` is a state some consumer can have reached in this stream
write         :func:`scenario_data`: a Scenario back as the dict of its file, what is malformed passed through
bundled/      the bundled scenarios (``simkit list``), shipped in the wheel
============  ==========================================================================================
"""
__all__ = ["read", "checks", "faults", "start", "stream", "write"]      # the modules are the API
