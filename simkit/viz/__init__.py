"""Views: figures, widgets and tables of runs, read from ground truth and verdicts.

============  ==========================================================================================
module        owns
============  ==========================================================================================
plot          the timeline (durable checkpoint against the worker's memory), event fates, crash matrix
swimlane      the swimlane figure: a Lamport diagram of one run
widgets       notebook widgets: explorer, comparison, step-through
report        plain-text verdict tables for the command line
============  ==========================================================================================
"""
