"""Views: figures, widgets and tables of runs, read from ground truth and verdicts.

============  ==========================================================================================
module        owns
============  ==========================================================================================
plot          the figures' names in one place (``plot.timeline``, ``plot.fates``, ...): re-exports only
style         colours, the label box, how many marks are labelled, how a token is abbreviated
facts         the facts' old view names (each defined once, in truth/derived and judge/facts)
timeline      the timeline (durable checkpoint against the worker's memory) and timelines side by side
rows          a trace as numpy columns, which the timeline selects its marks from
legend        the timeline's grouped legend
fates         the event-fates grid
instant       one instant's state and its picture (durable state beside each worker's memory)
matrix        the crash matrix (crash point × strategy)
curves        sweep curves: share of runs harmed against crash rate, with Wilson intervals
swimlane      the swimlane figure: a Lamport diagram of one run
labels        labels laid out in rows at draw time, never overlapping nor leaving the Axes (the swimlane's)
widgets       the notebook widgets' names in one place (``widgets.explorer()``, ...): re-exports only
inputs        the widgets' inputs and runs: the explorer's scenario and crash, the comparison's pair
crashes       single-crash schedules judged against the fault-free run (worse, same, better)
steps         the step-through's run: crash-point passes against the trace, "crash here" and its rerun
frames        tables of runs for a notebook: verdicts, violations, trace, pages served, receipts
show          what the widgets display, as plain functions (``show_run``, ``show_comparison``, ...)
canvas        figures as PNG bytes; one figure redrawn in place for a widget
explorer      the scenario explorer widget, its caches, and ``redraw_ms``
comparison    the comparison widget: ``safe`` beside a shortcut
stepper       the step-through widget: a slider over the trace and "crash here"
predict       the prediction widget: a question's answers as buttons, "check", and the check's reply
============  ==========================================================================================
"""

__all__: list[str] = []
