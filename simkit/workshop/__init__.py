"""The workshop checks the notebooks call (``from simkit import workshop as check``): predictions asked before
a figure, and the exercises of 09_workshop.

**Predictions.** A notebook asks a question before it shows the answer: the reader sets a variable
(``fetched_after_crash = None  # 'C7' or 'C8'``) and runs :func:`check_prediction`, which says whether the
prediction was right and why, from a run simkit makes at that moment (never from a stored answer), or picks an
answer in :func:`predict`'s widget and presses "check", which shows the same reply. Unanswered, it names the
variable to set, says how to answer and gives nothing away, so a notebook committed with its questions open
still runs top to bottom in CI.

**Exercises.** Each ``exercise_N`` takes the learner's answer (a class, a scenario, a function, ...), runs it
through simkit and says what it sees. A wrong answer gets a ``✗ not yet:`` message with a hint that points at
the evidence, not at the solution.

Nothing here raises: a wrong, unfinished or ill-typed answer, or learner code that
raises, gives a message, so a notebook of unanswered questions and unfinished exercises
runs top to bottom. A check returns an object that shows as its message and is true
exactly when the answer is right (the solutions notebook and the tests assert it).

============  ================================================================================================
module        owns
============  ================================================================================================
reply         :class:`Check`, the answer every check returns, and the guard that keeps checks from raising
predictions   :func:`check_prediction`, :func:`prediction_answer` and :func:`predict` (the widget) for each
              notebook's questions, the variable each is asked in and the answers a widget offers
answers       what simkit does, computed when asked: the run behind each question's answer
folds         :func:`reveal`, the fold over the cell that shows a question's answer, opened once it is
              answered
exercises     ``exercise_1`` ... ``exercise_7`` of notebook 09 and the consumers they hand the learner
conflict      exercise 5's service: worker 1's save refused with 409, in each of three situations
service       what notebook 07 calls: seed 004's requests in process (:class:`~.service.FeedClient`) and
              the tables of service runs; imported as ``simkit.workshop.service``, not re-exported
edition       :func:`~.edition.write_edition`, the attendee edition (``simkit workshop DIR``): the notebooks
              00-09, shipped in ``notebooks/`` beside these modules (package data), with the data they read
============  ================================================================================================
"""
from . import answers, exercises, folds, predictions, reply
from .answers import *  # noqa: F403
from .exercises import *  # noqa: F403
from .folds import *  # noqa: F403
from .predictions import *  # noqa: F403
from .reply import *  # noqa: F403

__all__ = [*answers.__all__, *exercises.__all__, *predictions.__all__, *reply.__all__, *folds.__all__]
