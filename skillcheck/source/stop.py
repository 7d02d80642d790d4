"""Stopping a check that nobody waits for any more (the language server's cancel, a newer
version of the document): the checks of a thread run inside ``stoppable(event)`` raise
``Stopped`` at the next stop point once the event is set. Stop points sit between rules
(``engine.check.dispatch``) and in the loops that grow with a file (links, anchors,
headings), so a long check stops within a small part of its time; outside ``stoppable``
(lint, pack) a stop point is one context-variable read.

A stopped check leaves nothing behind that a later check reads: what it had computed lives in
its own ``Skill``'s memos, which are dropped with it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class Stopped(BaseException):
    """A check given up because its result is no longer wanted (the language server's cancel
    or a newer version of the document). A BaseException, as ``asyncio.CancelledError`` is:
    no ``except Exception`` turns it into a rule's failure or a report."""


# the event that stops the checks of this thread (None: nothing can stop them, as in lint)
STOP: ContextVar[threading.Event | None] = ContextVar("skillcheck_stop", default=None)


@contextmanager
def stoppable(event: threading.Event) -> Iterator[None]:
    """The checks run inside raise ``Stopped`` at their next stop point once ``event`` is
    set."""
    token = STOP.set(event)
    try:
        yield
    finally:
        STOP.reset(token)


def stop_point() -> None:
    """Raise ``Stopped`` when this thread's checks were asked to stop."""
    event = STOP.get()
    if event is not None and event.is_set():
        raise Stopped
