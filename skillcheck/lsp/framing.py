"""The Language Server's input, framed by us: what a client sends is cut into messages
(``Content-Length`` header, blank line, JSON body) and handed to pygls re-framed, so that no
malformed frame can stop the server for good.

pygls's own loop loses step after one bad ``Content-Length`` (too short, too long,
non-numeric: every later message is read as part of the wrong frame) and dies on one of
5,000 digits (``int`` refuses it). Here a frame that does not hold one JSON value is
dropped with a note in the log and the reader resynchronises on the next header:

- a header is found by its own bytes, ``Content-Length: <digits>`` and a line break, which
  no JSON text can hold (a line break is escaped inside a string, and the header's words
  are no JSON token outside one); whatever precedes it is dropped;
- a length of more than ``MAX_DIGITS`` digits or above ``MAX_MESSAGE`` bytes, or a header
  block longer than ``MAX_HEADER`` bytes, drops that header;
- a body that turns out to hold the next header (the length was too long) is cut there;
  a body that is not JSON (too short) is dropped, and its tail skipped as garbage.

Memory stays bounded by ``MAX_MESSAGE`` plus one read.
"""

from __future__ import annotations

import json
import logging
from typing import BinaryIO

from skillcheck.source.lazy import LazyPattern

MAX_MESSAGE = 64 * 1024 * 1024  # bytes of one message's body
MAX_HEADER = 8192  # bytes of one message's header block
MAX_DIGITS = 10
_READ = 1 << 16

# the start of a header: anywhere in the input, never inside a JSON body
_HEADER = LazyPattern(rb"Content-Length:[ \t]*([0-9]+)[ \t]*\r?\n")
_KEEP = 64  # bytes of an unmatched tail kept: a header may be split between two reads

log = logging.getLogger(__name__)


class FramedReader:
    """A binary stream with ``readline`` and ``read`` (what pygls reads stdin with) giving
    well-framed messages only: ``Content-Length: N``, a blank line, N bytes of JSON."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.buf = bytearray()  # input not yet framed
        self.out = bytearray()  # framed output not yet read by pygls
        self.eof = False

    # --- what pygls calls ------------------------------------------------------------------

    def readline(self) -> bytes:
        if not self.out and not self._queue_next():
            return b""
        end = self.out.find(b"\n")
        end = len(self.out) if end < 0 else end + 1
        line = bytes(self.out[:end])
        del self.out[:end]
        return line

    def read(self, size: int = -1) -> bytes:
        if not self.out and not self._queue_next():
            return b""
        size = len(self.out) if size < 0 else size
        data = bytes(self.out[:size])
        del self.out[:size]
        return data

    # --- framing ---------------------------------------------------------------------------

    def _fill(self) -> bool:
        """Read what is available (at least a byte, or EOF); False at EOF."""
        if self.eof:
            return False
        read1 = getattr(self.raw, "read1", None)
        chunk = read1(_READ) if read1 is not None else self.raw.read(1)
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def _queue_next(self) -> bool:
        body = self.next_message()
        if body is None:
            return False
        self.out += b"Content-Length: %d\r\n\r\n" % len(body) + body
        return True

    def next_message(self) -> bytes | None:
        """The next well-framed JSON body, or None at the end of the input."""
        while True:
            match = _HEADER.search(self.buf)
            if match is None:
                if len(self.buf) > _KEEP:
                    _dropped(len(self.buf) - _KEEP, "no Content-Length header")
                    del self.buf[: len(self.buf) - _KEEP]
                if not self._fill():
                    return None
                continue
            if match.start():
                if self.buf[: match.start()].strip():
                    _dropped(match.start(), "not part of any frame")
                del self.buf[: match.start()]
                continue
            digits = match.group(1)
            if len(digits) > MAX_DIGITS or int(digits) > MAX_MESSAGE:
                _dropped(match.end(), f"a Content-Length of {len(digits)} digits or too large")
                del self.buf[: match.end()]
                continue
            body = self._body(match.end(), int(digits))
            if body is not None:
                return body
            if self.eof and not self.buf:
                return None

    def _body(self, start: int, length: int) -> bytes | None:
        """The body of the frame whose header ends at ``start``, or None once the frame is
        dropped (the buffer then starts where reading goes on)."""
        end = self.buf.find(b"\r\n\r\n", 0, start + MAX_HEADER)
        while end < 0:
            if len(self.buf) >= start + MAX_HEADER or not self._fill():
                _dropped(start, "a header block without its blank line")
                del self.buf[:start]
                return None
            end = self.buf.find(b"\r\n\r\n", 0, start + MAX_HEADER)
        begin = end + 4
        scanned = begin
        while True:
            # a header inside the body: the length was too long, the next frame starts there
            found = _HEADER.search(self.buf, max(begin, scanned - _KEEP), begin + length + _KEEP)
            if found is not None and found.start() < begin + length:
                _dropped(found.start(), "a Content-Length longer than its body")
                del self.buf[: found.start()]
                return None
            if len(self.buf) >= begin + length:
                break
            scanned = len(self.buf)
            if not self._fill():
                _dropped(len(self.buf), "the input ended inside a frame")
                self.buf.clear()
                return None
        body = bytes(self.buf[begin : begin + length])
        del self.buf[: begin + length]
        try:
            json.loads(body)
        except (ValueError, RecursionError):
            _dropped(length, "a body that is not one JSON value (a Content-Length too short?)")
            return None
        return body


def _dropped(count: int, why: str) -> None:
    log.warning("dropped %d bytes of input: %s", count, why)
