"""The judge: a verdict from ground truth only, never from a consumer's own bookkeeping.

============  ================================================================================================
module        owns
============  ================================================================================================
checker       :func:`check`: a :class:`Verdict` from a GroundTruth: lost, duplicated, regressions, invariants
verdict       :class:`Verdict`, each field declared once: its JSON name, safety or liveness, how it reads, its
              sweep column; ``ok``, ``as_dict``, how a run failed (kind, harms), the report and the sweep
              derive from it
claims        a consumer's receipts and effects against the handler's decisions
halts         step 3 both ways: a halt against what its worker was served, and a halt a breach called for
settlement    seed 001: operation records against the service's log and the binding in force
outcomes      when each event holds a terminal outcome (a receipt ordered, an ``applied`` one with its effect)
facts         facts for the figures: event fates, the durable prefix, spans at risk, when a loss became final
report        the verdict in words, written only here: table rows, the one-run summary, the one-line form
============  ================================================================================================
"""

__all__: list[str] = []
