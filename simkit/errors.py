"""User-facing errors: each message is one line that names the file, the key and the problem.

A library call's bad argument is named by its parameter (``max_crashes 60: at most 50``) and carried as
:attr:`SimkitError.param`; the command line names the flag instead (``--max-crashes 60: ...``, docs/cli.md).
"""

import re

__all__ = ["printable", "echoed", "described", "told", "a_or_an", "listed", "long_integer", "whole",
           "one_or_many", "SimkitError", "ArgumentError", "ScenarioError", "StrategyError", "ConsumerError",
           "Note", "Terminated", "Interrupted", "TimedOut", "SIGNALLED"]


def printable(text: str) -> str:
    """``text`` with every character a terminal would obey written as its
    escape (``\\x1b``, ``\\n``): it prints as itself, on one line. A message
    or description may echo a file name, key or string from a file."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def echoed(text: str, at_most: int = 100) -> str:
    """``text`` as a message may echo it: :func:`printable`, and past ``at_most`` characters its start and its
    length (a 100 KB path or name is no message)."""
    if len(text) <= at_most:
        return printable(text)
    return f"{printable(text[:at_most])}… ({len(text)} characters)"


def told(exc: BaseException) -> str:
    """``str(exc)``, or what can be said of ``exc`` when its ``__str__`` itself raises (a user's plugin may
    define one that does): its message must not become a second traceback."""
    try:
        return str(exc)
    except Exception:
        try:
            return f"<{type(exc).__name__}: str() raised>"
        except Exception:
            return "<str() raised>"


def described(value, at_most: int = 60) -> str:
    """``repr(value)`` as a message shows a caller's value: an integer past 64 bits by its size (its digits
    could be thousands), a repr that raises by its type, at most ``at_most`` characters."""
    if type(value) is int and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    try:
        text = repr(value)
    except Exception:                   # noqa: BLE001 -- a caller's object whose repr raises
        text = f"<{type(value).__name__}>"
    return text if len(text) <= at_most else text[:at_most - 1] + "…"


def a_or_an(noun: str) -> str:
    """``noun`` after its indefinite article as a message names a type or record: ``an Event``, ``a Load``
    (``an`` before a vowel letter)."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def listed(names, noun: str = "field") -> str:
    """What a thing has, named in a message: ``no field``, ``the field 'cursor'``, ``the fields 'event',
    'outcome'``."""
    names = [repr(n) for n in names]
    if not names:
        return f"no {noun}"
    return f"the {noun}{'s' if len(names) > 1 else ''} {', '.join(names)}"


def long_integer(text: str) -> str:
    """What to say of a TOML ``text`` whose integer Python refuses to read (more than 4,300 decimal digits:
    tomllib raises a bare ValueError), naming its line."""
    m = re.search(r"[0-9][0-9_]{4300,}", text)
    return (
        f"{f'line {text.count(chr(10), 0, m.start()) + 1}: ' if m else ''}an integer of more than 4300 digits"
    )


def whole(param: str, value, least: int | None, most: int | None = None) -> None:
    """A library call's count (seeds, processes) held to ``least``..``most``: an ``int``, not a bool, a float
    or a string (``seeds="3"`` or ``2.5`` were a bare TypeError from deep in the call, ``True`` ran as 1).
    Raises :class:`SimkitError` naming ``param``; ``None``: no bound on that side."""
    if type(value) is not int:
        raise SimkitError(f"{param} {described(value)}: must be a whole number (an int), not "
                          f"{a_or_an(type(value).__name__)}", param=param)
    low = least is not None and value < least
    if low or (most is not None and value > most):
        bound = f"at least {least}" if low else f"at most {most}"
        raise SimkitError(f"{param} {described(value)}: must be {bound}", param=param)


def one_or_many(param: str, given, alone: tuple[type, ...]) -> tuple:
    """``given`` as a tuple; one of ``alone``'s types given by itself is a tuple of one. A tuple written
    without its comma is one (``("safe")``, ``(0.05)``): a string was a strategy per letter (``strategy s:
    unknown``), a number a ``TypeError``."""
    if isinstance(given, alone):
        return (given,)
    try:
        return tuple(given)
    except TypeError:
        raise SimkitError(f"{param} {described(given)}: give one or a list of them", param=param) from None


class SimkitError(Exception):
    """Base of every error simkit reports to a user (CLI exit status 2).

    ``param``: the parameter of the library call whose value the message starts with (``seeds 0: must be at
    least 1``), if any; :func:`simkit.cli.output.spoken` puts the flag that sets it in its place."""

    #: shown in a notebook as its one line, not a traceback through simkit (:attr:`_render_traceback_`)
    one_line = True

    def __init__(self, *args, param: str | None = None):
        super().__init__(*args)
        self.param = param  # kept by pickling (the instance's __dict__), so a worker process's error has it

    @property
    def _render_traceback_(self):
        """IPython's hook: a notebook cell shows a bad input as the command line does, one line naming it
        (``ScenarioError: gauntlt: no such scenario ...``), not 30 lines of simkit's frames; ``%debug`` still
        opens them. Absent (``AttributeError``) where :attr:`one_line` is false."""
        if not self.one_line:
            raise AttributeError("_render_traceback_")
        return lambda: [f"{type(self).__name__}: {told(self)}"]


class ArgumentError(SimkitError, ValueError):
    """A library call's argument outside what it takes (a plot's ``layers`` or ``metric``): a ``ValueError``,
    and a :class:`SimkitError`, so that a notebook shows its one line, not a traceback."""


class ScenarioError(SimkitError, ValueError):
    """A scenario file (or command-line fault) is malformed."""


class StrategyError(SimkitError, LookupError):
    """A strategy name or ``path:Class`` reference cannot be resolved."""


class ConsumerError(SimkitError, RuntimeError):
    """A consumer's own code raised during a run, or yielded something that
    is not a request. The message names the strategy, the exception and where
    it was raised (:func:`simkit.procedure.strategies.consumer_error`). In a notebook its full traceback
    shows: the frames of the consumer's own code are where its author debugs."""

    one_line = False


class Note(UserWarning):
    """What a user should know that is no error (``jobs 1000: using 8 worker
    processes``), as a warning; ``param`` as :class:`SimkitError`'s. The
    command line prints it as one line ``simkit: ...`` naming the flag."""

    def __init__(self, *args, param: str | None = None):
        super().__init__(*args)
        self.param = param


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where a signal handler caught it, to unwind the way Ctrl-C does (files and
    folders cleaned up); ``signum`` says which, and the CLI exits with 128 + it."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) as the command line's handler raises it: told apart from a ``KeyboardInterrupt`` that a
    consumer's own code raises, which is the consumer's error (one line, exit 2), not the user's Ctrl-C."""


class TimedOut(SimkitError):
    """A run took longer in wall-clock time than it may (:data:`simkit.world.guard.WALL_SECONDS`): a consumer
    that sleeps or spins in its own code, where the simulated world's guards do not reach."""


#: What a signal handler raises (:class:`Terminated`, :class:`Interrupted`, :class:`TimedOut`): never taken
#: for a consumer's own error, though it is raised in the consumer's code.
SIGNALLED = (Terminated, Interrupted, TimedOut)
