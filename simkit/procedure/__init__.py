"""The procedure under test: seed 000's consumer and the unsafe shortcuts beside it.

============  ==========================================================================================
module        owns
============  ==========================================================================================
consumer      :class:`Consumer`, steps 1-7 of the procedure as hooks that yield requests (:mod:`simkit.ops`)
driver        the driver protocol: one method per request, subclassed by the SimPy world and the live worker
shortcuts     the seven unsafe shortcuts and :data:`DECLARED`, each one's scenario, hooks and harm
strategies    the ``--strategy`` registry: ``safe``, the shortcuts, ``path.py:Class``; consumer errors
lives         a worker life's consumer class, its module run afresh: nothing outlives a crash in memory
wire          the requests and their results as JSON lines (protocol 1 of docs/protocol.md)
external      ``--strategy exec:COMMAND``: a consumer in any language, one real process per worker life
============  ==========================================================================================

A procedure only yields requests; it never touches the world, the store or the judge.
"""

__all__: list[str] = []
