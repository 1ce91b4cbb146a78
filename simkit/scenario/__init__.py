"""Scenarios: the TOML files that describe a world, and the ones simkit ships.

============  ==========================================================================================
module        owns
============  ==========================================================================================
read          :func:`load`, :func:`parse`, :func:`bundled`: a file in, a validated Scenario out
bundled/      the bundled scenarios (``simkit list``), shipped in the wheel
============  ==========================================================================================
"""
from simkit._moved import forward

__getattr__ = forward(__name__, "simkit.scenario.read")
