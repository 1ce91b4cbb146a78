"""The world: a deterministic SimPy simulation of everything a consumer talks to.

============  ================================================================================================
module        owns
============  ================================================================================================
simulation    :class:`World`: runs workers, executes their requests with latency, crash points and faults
timed         the requests that take simulated time: fetch, effect, commit, barrier, wait (a base of World)
calls         seed 001's requests in the world: reserve, call (lost, late, crossed replies), settle
guard         the progress guard: the step budget, and too many requests at one instant
provider      ordered pages behind opaque continuation tokens: overlaps, backfills, empty and stuck pages
arrivals      a generated stream's seeded arrivals and its chain of pages by random token, before the table
events        the provider's event table: the stream as columns, ids derived from positions, events built on
              read
sink          the handler's decisions and the effects an event leaves
external      the external service of fenced settlement, with late replies and authorization
faults        :class:`FaultPlan`: which crash, lost request or reply, delay or pause happens where
============  ================================================================================================
"""
__all__: list[str] = []     # the modules are the API
