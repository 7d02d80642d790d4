"""The Language Server: pygls wiring for ``lsp.analysis``.

Diagnostics are published on open and save at once, and on change after the editor has been
quiet for ``DEBOUNCE`` seconds, always from the editor's buffer. Rules over several skills
(duplicate names) need the other skills as saved: they run on open and save. One check runs
at a time, in a worker thread, so the server keeps answering; an exception while checking a
document is reported as one diagnostic and in the log, and the server goes on.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import traceback
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from skillcheck import __version__
from skillcheck.lsp import analysis
from skillcheck.source.skill import Diagnostic, Severity
from skillcheck.source.text import split_lines

DEBOUNCE = 0.3  # seconds of quiet after a change before the buffer is checked
SOURCE = "skillcheck"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}

log = logging.getLogger(__name__)


class SkillServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("skillcheck", __version__)
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.checked: dict[str, tuple[int | None, analysis.Checked]] = {}
        self.collection: dict[str, list[Diagnostic]] = {}
        self.lock = threading.Lock()  # one check at a time: rules share per-run tables

    # --- positions in the client's units ---------------------------------------------------

    def units(self, line: str, column: int) -> int:
        encoding = self.server_capabilities.position_encoding or types.PositionEncodingKind.Utf16
        return analysis.client_units(line, column, encoding)

    def columns(self, line: str, units: int) -> int:
        """A client column (in its units) as a code-point column of ``line``."""
        if line.isascii():
            return min(max(units, 0), len(line))
        count = 0
        for index, char in enumerate(line):
            if count >= units:
                return index
            count += self.units(char, 1)
        return len(line)

    def to_client(self, lines: list[str], position: analysis.Position) -> types.Position:
        line, column = position
        if line >= len(lines):
            return types.Position(line=len(lines), character=0)
        return types.Position(line=line, character=self.units(lines[line], column))

    def from_client(self, lines: list[str], position: types.Position) -> analysis.Position:
        if position.line >= len(lines):
            return (position.line, 0)
        return (position.line, self.columns(lines[position.line], position.character))

    def lsp_range(self, lines: list[str], start: analysis.Position, end: analysis.Position):
        return types.Range(start=self.to_client(lines, start), end=self.to_client(lines, end))

    # --- checking --------------------------------------------------------------------------

    def path_of(self, uri: str) -> Path | None:
        path = to_fs_path(uri) if uri.startswith("file:") else None
        return Path(path) if path else None

    def scope_of(self, path: Path) -> Path | None:
        """The workspace folder holding ``path`` (where collection rules look for skills)."""
        roots = [self.path_of(f.uri) for f in self.workspace.folders.values()]
        if self.workspace.root_uri:
            roots.append(self.path_of(self.workspace.root_uri))
        found = [r for r in roots if r is not None and path.is_relative_to(r)]
        return max(found, key=lambda r: len(r.parts)) if found else None

    def check(
        self, uri: str, version: int | None, text: str, collection: bool
    ) -> analysis.Checked | None:
        """Check ``text``, the buffer of ``uri`` (runs in a worker thread)."""
        path = self.path_of(uri)
        if path is None or path.suffix.lower() not in analysis.MARKDOWN_SUFFIXES:
            return None
        with self.lock:
            try:
                checked = analysis.check_buffer(path, text)
                if collection and checked.problem is None and checked.skill is not None:
                    self.collection[uri] = analysis.collection_diagnostics(
                        path, self.scope_of(path)
                    )
            except Exception as exc:  # one document's failure never stops the server
                log.error("checking %s failed:\n%s", path, traceback.format_exc())
                checked = analysis.Checked(path, text, problem=f"internal error: {exc!r}")
        return checked

    def publish(self, uri: str, version: int | None, checked: analysis.Checked) -> None:

        lines = split_lines(checked.text)
        out: list[types.Diagnostic] = []
        if checked.problem is not None:
            out.append(
                types.Diagnostic(
                    range=self.lsp_range(lines, (0, 0), (0, 0)),
                    message=f"skillcheck: {checked.problem}",
                    severity=types.DiagnosticSeverity.Error,
                    source=SOURCE,
                )
            )
        seen = set()
        for diag in [*checked.diagnostics, *self.collection.get(uri, [])]:
            key = (diag.code, diag.line, diag.column, diag.message)
            if key in seen:
                continue
            seen.add(key)
            start, end = analysis.diagnostic_range(diag, checked.text)
            out.append(
                types.Diagnostic(
                    range=self.lsp_range(lines, start, end),
                    message=diag.message + (f"\nhelp: {diag.help}" if diag.help else ""),
                    severity=_SEVERITY[diag.severity],
                    code=diag.code,
                    source=SOURCE,
                    data={"slug": diag.slug, "fixable": diag.fix is not None},
                )
            )
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=out)
        )

    async def in_thread(self, func: Any, *args: Any) -> Any:
        """``func(*args)`` in a worker thread, one at a time (the event loop keeps serving)."""

        def run() -> Any:
            with self.lock:
                return func(*args)

        return await asyncio.to_thread(run)

    async def current(self, uri: str) -> analysis.Checked | None:
        """The latest check of the buffer, redone (in a worker thread) when it changed since."""
        path = self.path_of(uri)
        if path is None:
            return None
        document = self.workspace.get_text_document(uri)
        version, text = document.version, document.source
        cached = self.checked.get(uri)
        if cached is not None and cached[0] == version:
            return cached[1]

        checked = await self.in_thread(analysis.check_buffer, path, text)
        self.checked[uri] = (version, checked)
        return checked

    def schedule(self, uri: str, delay: float, collection: bool) -> None:
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()

        async def run() -> None:
            try:
                if delay:
                    await asyncio.sleep(delay)
                document = self.workspace.get_text_document(uri)
                version, text = document.version, document.source
                checked = await asyncio.to_thread(self.check, uri, version, text, collection)
                # published from the event loop, the one thread that writes to the client
                if checked is not None and document.version == version:
                    self.checked[uri] = (version, checked)
                    self.publish(uri, version, checked)
            except asyncio.CancelledError:
                pass
            finally:
                if self.pending.get(uri) is task:
                    del self.pending[uri]

        task = asyncio.get_running_loop().create_task(run())
        self.pending[uri] = task


def make_server() -> SkillServer:
    server = SkillServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: SkillServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0, collection=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: SkillServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE, collection=False)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: SkillServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0, collection=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: SkillServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        task = ls.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        ls.checked.pop(uri, None)
        ls.collection.pop(uri, None)
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: SkillServer, params: Any) -> None:
        for task in ls.pending.values():
            task.cancel()
        ls.pending.clear()

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll]
        ),
    )
    async def code_action(
        ls: SkillServer, params: types.CodeActionParams
    ) -> list[types.CodeAction]:

        uri = params.text_document.uri
        checked = await ls.current(uri)
        if checked is None:
            return []
        lines = split_lines(checked.text)
        wanted = (
            ls.from_client(lines, params.range.start),
            ls.from_client(lines, params.range.end),
        )
        only = params.context.only
        out = []
        for action in await ls.in_thread(analysis.actions, checked, wanted):
            if only and not any(action.kind.startswith(kind) for kind in only):
                continue
            edits = [
                types.TextEdit(range=ls.lsp_range(lines, e.start, e.end), new_text=e.text)
                for e in action.edits
            ]
            out.append(
                types.CodeAction(
                    title=action.title,
                    kind=action.kind,
                    edit=types.WorkspaceEdit(changes={uri: edits}),
                    is_preferred=action.preferred or None,
                )
            )
        return out

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: SkillServer, params: types.HoverParams) -> types.Hover | None:

        checked = await ls.current(params.text_document.uri)
        if checked is None:
            return None
        position = ls.from_client(split_lines(checked.text), params.position)
        text = analysis.hover(checked, position)
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[":", " "])
    )
    def completion(ls: SkillServer, params: types.CompletionParams) -> types.CompletionList:

        uri = params.text_document.uri
        path = ls.path_of(uri)
        empty = types.CompletionList(is_incomplete=False, items=[])
        if path is None:
            return empty
        text = ls.workspace.get_text_document(uri).source
        checked = ls.checked.get(uri)
        settings = checked[1].settings if checked else None
        targets = settings.targets if settings is not None else ("agentskills",)
        position = ls.from_client(split_lines(text), params.position)
        items = [
            types.CompletionItem(
                label=c.label,
                detail=c.detail,
                insert_text=c.insert,
                kind=types.CompletionItemKind.Property
                if c.insert.endswith(": ")
                else types.CompletionItemKind.Value,
            )
            for c in analysis.completions(path, text, position, targets)
        ]
        return types.CompletionList(is_incomplete=False, items=items)

    return server


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="skillcheck lsp: %(message)s")
    make_server().start_io()
