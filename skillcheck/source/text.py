"""Text primitives: bytes to text, line breaks, positions, binary sniffing.

Every reader of the package uses these, so that a line number or column means the same in
every diagnostic whichever module computed it. Two line-break conventions exist side by side
and both are right for their readers (see ``split_lines`` and ``lf_lines``).
"""

from __future__ import annotations

import codecs

from skillcheck.source.lazy import LazyPattern
from skillcheck.source.skill import Pos, Span, TextIssue

BINARY_SNIFF = 8192  # a NUL in the first 8 KiB marks a file as binary (as git decides)


def is_binary(data: bytes) -> bool:
    """Whether a file's bytes are binary: a NUL in the first ``BINARY_SNIFF`` bytes."""
    return data.find(b"\0", 0, BINARY_SNIFF) >= 0  # no copy of the head


# --- decoding ------------------------------------------------------------------------------


def decode_text(data: bytes) -> str:
    """A file's bytes as text: UTF-8, invalid bytes replaced (SK9xx reports them), a leading
    BOM dropped. SKILL.md itself is decoded by ``decode``, which reports what it finds."""
    return data.decode("utf-8", "replace").removeprefix("\ufeff")


def trim_partial_utf8(raw: bytes) -> bytes:
    """Drop a multi-byte character cut in half at the end of a bounded read."""
    for cut in range(1, min(4, len(raw)) + 1):
        byte = raw[-cut]
        if byte & 0xC0 == 0x80:  # a continuation byte: look further back for the lead
            continue
        need = 2 if 0xC0 <= byte < 0xE0 else 3 if 0xE0 <= byte < 0xF0 else 4 if byte >= 0xF0 else 1
        return raw[:-cut] if need > cut else raw
    return raw


def _looks_utf16(raw: bytes) -> str | None:
    """A BOM-less UTF-16 file has a NUL in every other byte of ASCII text."""
    sample = raw[:256]
    if len(sample) < 4:
        return None
    even = sample[0::2].count(0)
    odd = sample[1::2].count(0)
    half = len(sample) // 2
    if odd > 0.8 * half and even < 0.1 * half:
        return "utf-16-le"
    if even > 0.8 * half and odd < 0.1 * half:
        return "utf-16-be"
    return None


def decode(raw: bytes) -> tuple[str, list[TextIssue]]:
    """Decode SKILL.md bytes as UTF-8, reporting BOMs, UTF-16/32 and invalid bytes."""
    issues: list[TextIssue] = []
    one = Span(Pos(1, 1), Pos(1, 2))
    for bom, encoding, kind in (
        (codecs.BOM_UTF32_LE, "utf-32-le", "utf32"),
        (codecs.BOM_UTF32_BE, "utf-32-be", "utf32"),
        (codecs.BOM_UTF8, "utf-8", "bom"),
        (codecs.BOM_UTF16_LE, "utf-16-le", "utf16"),
        (codecs.BOM_UTF16_BE, "utf-16-be", "utf16"),
    ):
        if raw.startswith(bom):
            label = encoding.upper().replace("-LE", " LE").replace("-BE", " BE")
            detail = "UTF-8 byte order mark" if kind == "bom" else f"{label} with a byte order mark"
            issues.append(TextIssue(kind, one, detail, 0, len(bom)))  # type: ignore[arg-type]
            if kind == "bom":
                raw = raw[len(bom) :]
                break
            return raw[len(bom) :].decode(encoding, "replace"), issues
    else:
        guessed = _looks_utf16(raw)
        if guessed:
            detail = f"{guessed.upper().replace('-LE', ' LE').replace('-BE', ' BE')} without a BOM"
            issues.append(TextIssue("utf16", one, detail, 0, 0))
            return raw.decode(guessed, "replace"), issues
    offset = 3 if issues and issues[0].kind == "bom" else 0
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = 0
        start = exc.start
        first = exc.start
        while True:
            bad += 1
            try:
                raw[start + 1 :].decode("utf-8")
                break
            except UnicodeDecodeError as more:
                start = start + 1 + more.start
                if bad >= 1000:
                    break
        text = raw.decode("utf-8", "replace")
        # everything before the first bad byte is valid, so its length is the offset in text
        pos = offset_pos(text, len(raw[:first].decode("utf-8")))
        detail = f"invalid UTF-8 byte 0x{raw[first]:02x}"
        issues.append(
            TextIssue(
                "invalid-utf8",
                Span(pos, Pos(pos.line, pos.column + 1)),
                detail,
                first + offset,
                first + offset + 1,
            )
        )
    nul = text.find("\x00")
    if nul >= 0:
        pos = offset_pos(text, nul)
        issues.append(TextIssue("nul", Span(pos, Pos(pos.line, pos.column + 1)), "NUL byte"))
    return text, issues


# --- lines and positions ---------------------------------------------------------------


def offset_pos(text: str, offset: int) -> Pos:
    """Line and column of ``text[offset]``; LF, CRLF and a lone CR each end a line, as in
    YAML, CommonMark and editors (so positions agree with ``split_lines``)."""
    prefix = text[:offset]
    line = prefix.count("\n") + prefix.count("\r") - prefix.count("\r\n") + 1
    start = max(prefix.rfind("\n"), prefix.rfind("\r")) + 1
    return Pos(line, offset - start + 1)


def line_endings(text: str) -> list[TextIssue]:
    """Report the first CRLF and the first lone CR, with their positions."""
    issues: list[TextIssue] = []
    if "\r" not in text:  # the common case: no copy of the text for the lone-CR search
        return issues
    crlf = text.find("\r\n")
    if crlf >= 0:
        count = text.count("\r\n")
        pos = offset_pos(text, crlf)
        span = Span(pos, Pos(pos.line, pos.column + 1))
        issues.append(TextIssue("crlf", span, f"{count} CRLF line ending{'s' * (count != 1)}"))
    lone = text.replace("\r\n", "\n\n").find("\r")
    if lone >= 0:
        pos = offset_pos(text, lone)
        issues.append(TextIssue("cr", Span(pos, Pos(pos.line, pos.column + 1)), "lone CR"))
    return issues


_LINE_BREAK = LazyPattern(r"\r\n|\r|\n")
# the same line ends in the raw bytes: maps a (line, column) of ``split_lines`` to an offset
LINE_BREAK_BYTES = LazyPattern(rb"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines as YAML and CommonMark count them: on LF, CRLF and a lone CR. SKILL.md's
    lines (``Document.lines``), its positions (``offset_pos``) and the Language Server's
    buffers use these; other Markdown files are numbered by ``lf_lines``.

    (YAML 1.1 also breaks lines at U+0085, U+2028 and U+2029; CommonMark and editors do
    not, so those stay inside a line and YAML positions are mapped by character offset.)
    """
    if "\r" not in text:
        return text.split("\n")
    return _LINE_BREAK.split(text)


def lf_lines(text: str) -> list[str]:
    """Lines broken on LF only, a CRLF's CR dropped: how the Markdown reader numbers the lines
    of files other than SKILL.md (a lone CR stays inside its line)."""
    lines = text.split("\n")
    if "\r" not in text:  # almost every file: no per-line work
        return lines
    return [line[:-1] if line.endswith("\r") else line for line in lines]


class LinePositions:
    """Offset -> (line, column) over a text whose lines end at LF (``lf_lines``: a CR is a
    column); fast when offsets come in increasing order."""

    def __init__(self, text: str, first_line: int = 1) -> None:
        self.text = text
        self.first_line = first_line
        self.line = first_line  # the line of offset ``scanned``
        self.line_start = 0  # where that line starts
        self.scanned = 0

    def pos(self, offset: int) -> Pos:
        if offset < self.scanned:
            self.line, self.line_start, self.scanned = self.first_line, 0, 0
        newlines = self.text.count("\n", self.scanned, offset)
        if newlines:
            self.line += newlines
            self.line_start = self.text.rfind("\n", self.scanned, offset) + 1
        self.scanned = offset
        return Pos(self.line, offset - self.line_start + 1)

    def span(self, start: int, end: int) -> Span:
        first = self.pos(start)
        if "\n" in self.text[start:end]:
            return Span(first, self.pos(end))
        return Span(first, Pos(first.line, first.column + max(end - start, 1)))
