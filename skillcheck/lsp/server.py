"""The Language Server: pygls wiring for ``lsp.analysis``.

Diagnostics are published on open and save at once, and on change after the editor has been
quiet for ``DEBOUNCE`` seconds, always from the editor's buffer. Rules over several skills
(duplicate names) need the other skills as saved: they run on open and save. One check runs
at a time, in a worker thread, so the server keeps answering; an exception while checking a
document is reported as one diagnostic and in the log, and the server goes on.

A check stops (``source.stop.Stopped``, at its next stop point) once nobody wants its result:
its requests were cancelled (``$/cancelRequest``, answered -32800), a newer version of the
document arrived (newest version wins; a request waiting for the stale check is answered
-32801 ContentModified), the document was closed, or a request needs the worker while the
check only publishes diagnostics (it gives way and runs again once no request waits).

Every request is answered, with a result or an error: before ``initialize`` with -32002,
with malformed parameters with -32602, and an error never carries a traceback (that goes to
the log). A request waits at most ``REQUEST_BUDGET`` seconds for a check (it is answered
with an error asking to retry, the check goes on); a buffer larger than ``MAX_BUFFER`` is not
checked (one diagnostic says so); ``exit`` ends the process at once, even during a check.
The input is framed by ``lsp.framing``, so a malformed frame is dropped, never fatal. A file
the editor has not opened is read as lint reads files: regular files only, bounded, without
blocking (a FIFO or a device there gives nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar
from urllib.parse import unquote as urllib_unquote

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcContentModified,
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcServerNotInitialized,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from skillcheck import __version__
from skillcheck.lsp import analysis
from skillcheck.lsp.framing import FramedReader
from skillcheck.source.load import MAX_READ, read_regular
from skillcheck.source.skill import Diagnostic, Severity
from skillcheck.source.stop import Stopped, stop_point, stoppable
from skillcheck.source.text import decode_text, split_lines

T = TypeVar("T")

DEBOUNCE = 0.3  # seconds of quiet after a change before the buffer is checked
SOURCE = "skillcheck"
REQUEST_BUDGET = 10.0  # seconds a request waits for a check before it is answered "busy"
MAX_BUFFER = MAX_READ  # bytes: a larger buffer is not checked, as lint reads no more
_REQUEST_FAILED = -32803  # LSP's RequestFailed: "try again later"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}

log = logging.getLogger(__name__)


class Protocol(LanguageServerProtocol):
    """pygls's protocol, made to answer every request: -32002 before ``initialize``, -32602
    for parameters that do not fit the request's type, and no traceback in an error."""

    initialize_seen = False

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" not in data or "method" not in data or "jsonrpc" not in data:
                raise
            method = data.get("method")
            error = JsonRpcInvalidParams(f"invalid parameters for {method!r}")
            if isinstance(exc, JsonRpcInvalidParams):
                self._send_response(data["id"], error=error.to_response_error())
            else:
                self._send_response(data["id"], error=exc.to_response_error())
            return SimpleNamespace()  # handle_message skips it

    def handle_message(self, message: Any) -> None:
        if isinstance(message, SimpleNamespace):
            return  # answered already (see structure_message)
        method = getattr(message, "method", None)
        if method == types.INITIALIZE:
            self.initialize_seen = True
        elif not self.initialize_seen and method != types.EXIT:
            if getattr(message, "id", None) is not None and method is not None:
                error = JsonRpcServerNotInitialized("the server has not been initialized")
                self._send_response(message.id, error=error.to_response_error())
            return  # a notification before initialize is dropped, as the protocol says
        super().handle_message(message)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        data = getattr(error, "data", None)
        if isinstance(data, dict) and "traceback" in data:
            log.error("request %s failed:\n%s", msg_id, "".join(data["traceback"]))
            error.data = None
        super()._send_response(msg_id, result, error)


def in_daemon(func: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """``func(*args)`` in a daemon thread: a check still running never delays the end of
    the process (``asyncio.to_thread``'s pool is joined at exit)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(value: Any, failed: bool) -> None:
        if future.done():
            return
        if failed:
            future.set_exception(value)
            if isinstance(value, Stopped):
                future.exception()  # retrieved: a stopped check nobody waits for is no error
        else:
            future.set_result(value)

    def run() -> None:
        value: Any
        try:
            value, failed = func(*args), False
        except BaseException as exc:  # handed to the awaiting side
            value, failed = exc, True
        loop.call_soon_threadsafe(settle, value, failed)

    threading.Thread(target=run, daemon=True).start()
    return future


class Job:
    """One check of one version of a document, in a worker thread, shared by the parties
    waiting for it (requests, and the task that publishes diagnostics)."""

    future: asyncio.Future[analysis.Checked | None]

    def __init__(self) -> None:
        self.stop = threading.Event()  # set: the check raises Stopped before its next rule
        self.parties = 0
        self.requests = 0
        self.preempted = False  # stopped to let a request's check run first


class SkillServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("skillcheck", __version__, protocol_cls=Protocol)
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.jobs: dict[tuple[str, int | None, bool], Job] = {}
        self.requests = 0  # requests waiting for a check
        self.no_requests = asyncio.Event()  # set while there are none: publishing may start
        self.no_requests.set()
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

    def buffer(self, uri: str) -> tuple[int | None, str] | None:
        """(version, text) of ``uri``: the editor's buffer when it is open, else the file
        as lint reads it (a regular file, bounded, never blocking); None when unreadable."""
        document = self.workspace.text_documents.get(uri)
        if document is None:
            document = self.workspace.text_documents.get(urllib_unquote(uri))
        if document is not None:
            return document.version, document.source
        path = self.path_of(uri)
        if path is None:
            return None
        try:
            data, _size = read_regular(path, MAX_BUFFER + 1)
        except OSError as exc:
            log.warning("%s: not read: %s", path, exc.strerror or exc)
            return None
        return None, decode_text(data)

    def check(
        self,
        uri: str,
        version: int | None,
        text: str,
        collection: bool,
        stop: threading.Event | None = None,
    ) -> analysis.Checked | None:
        """Check ``text``, the buffer of ``uri`` (runs in a worker thread); raises ``Stopped``
        once ``stop`` is set (before the check takes its turn, or between two rules)."""
        path = self.path_of(uri)
        if path is None or path.suffix.lower() not in analysis.MARKDOWN_SUFFIXES:
            return None
        if len(text) > MAX_BUFFER or len(text.encode("utf-8", "surrogatepass")) > MAX_BUFFER:
            return analysis.Checked(
                path,
                text,
                problem=f"larger than {MAX_BUFFER:,} bytes: not checked (lint reads no more)",
            )
        with self.lock, stoppable(stop or threading.Event()):
            stop_point()  # stopped while it waited for its turn
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

    async def in_thread(self, func: Callable[..., T], *args: Any) -> T:
        """``func(*args)`` in a worker thread, one at a time (the event loop keeps serving),
        waited for at most ``REQUEST_BUDGET`` seconds; stopped when the request is cancelled."""
        stop = threading.Event()

        def run() -> T:
            with self.lock, stoppable(stop):
                stop_point()
                return func(*args)

        try:
            with self.requesting():
                return await self.within_budget(in_daemon(run))
        except asyncio.CancelledError:
            stop.set()
            raise

    async def within_budget(self, future: asyncio.Future[T]) -> T:
        try:
            return await asyncio.wait_for(asyncio.shield(future), REQUEST_BUDGET)
        except TimeoutError:
            raise JsonRpcException(
                f"skillcheck is still checking (more than {REQUEST_BUDGET:g} s); try again",
                code=_REQUEST_FAILED,
            ) from None

    def modified(self) -> JsonRpcContentModified:
        return JsonRpcContentModified("the document changed while it was checked; ask again")

    def start(self, uri: str, version: int | None, text: str, collection: bool) -> Job:
        """The check of ``uri`` at ``version``: the one under way (shared), else a new one.
        A new version stops the checks of the others (newest version wins)."""
        key = (uri, version, collection)
        job = self.jobs.get(key)
        if job is not None and not job.stop.is_set():  # a stopping one is not shared
            return job
        for other_key, other in self.jobs.items():
            if other_key[0] == uri and version is not None and other_key[1] != version:
                other.stop.set()  # stale: its result would be dropped anyway
        job = Job()
        job.future = in_daemon(self.check, uri, version, text, collection, job.stop)
        self.jobs[key] = job

        def done(_future: asyncio.Future[analysis.Checked | None]) -> None:
            if self.jobs.get(key) is job:
                del self.jobs[key]

        job.future.add_done_callback(done)
        return job

    async def wait(self, job: Job, request: bool) -> analysis.Checked | None:
        """The result of ``job`` for one party (a request, or the task that publishes);
        when the last party is cancelled, the check stops. A request makes the checks that
        only publish give way (they are started again after it)."""
        job.parties += 1
        job.requests += request
        try:
            if request:
                with self.requesting():
                    return await self.within_budget(job.future)
            return await asyncio.shield(job.future)
        except asyncio.CancelledError:
            if job.parties == 1:
                job.stop.set()
            raise
        finally:
            job.parties -= 1
            job.requests -= request

    @contextlib.contextmanager
    def requesting(self) -> Iterator[None]:
        """While a request waits for the worker: the checks that only publish give way (they
        are started again once no request waits)."""
        self.requests += 1
        self.no_requests.clear()
        for job in self.jobs.values():
            if job.requests == 0:
                job.stop.set()
                job.preempted = True
        try:
            yield
        finally:
            self.requests -= 1
            if not self.requests:
                self.no_requests.set()

    async def current(self, uri: str) -> analysis.Checked | None:
        """The latest check of the buffer, redone (in a worker thread) when it changed since;
        a check under way for the same version is shared, not started twice. A check
        stopped by a newer version answers ContentModified (the client asks again)."""
        path = self.path_of(uri)
        if path is None:
            return None
        found = self.buffer(uri)
        if found is None:
            return None
        version, text = found
        cached = self.checked.get(uri)
        if cached is not None and cached[0] == version and version is not None:
            return cached[1]
        job = self.jobs.get((uri, version, True))
        if job is None or job.stop.is_set():
            job = self.start(uri, version, text, False)
        try:
            checked = await self.wait(job, request=True)
        except Stopped:
            raise self.modified() from None
        if checked is None:
            checked = analysis.Checked(path, text)
        elif version is not None:
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
                while True:
                    while self.requests:  # after the requests: they take the worker first
                        await self.no_requests.wait()
                    found = self.buffer(uri)
                    if found is None:
                        return
                    version, text = found
                    job = self.start(uri, version, text, collection)
                    try:
                        checked = await self.wait(job, request=False)
                    except Stopped:
                        if job.preempted:
                            continue  # it gave way to a request: check again after it
                        return  # a newer version or a close stopped it
                    break
                # published from the event loop, the one thread that writes to the client
                now = self.buffer(uri)
                if checked is not None and now is not None and now[0] == version:
                    self.checked[uri] = (version, checked)
                    self.publish(uri, version, checked)
            except asyncio.CancelledError:
                pass
            finally:
                if self.pending.get(uri) is task:
                    del self.pending[uri]

        task = asyncio.get_running_loop().create_task(run())
        self.pending[uri] = task

    def stop_checks(self, uri: str, but: int | None = None) -> None:
        """Stop the checks of ``uri`` (but those of version ``but``)."""
        for (of, version, _), job in self.jobs.items():
            if of == uri and (but is None or version != but):
                job.stop.set()


def make_server() -> SkillServer:
    server = SkillServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: SkillServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0, collection=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: SkillServer, params: types.DidChangeTextDocumentParams) -> None:
        # newest version wins: what checks an older one is stale at once
        ls.stop_checks(params.text_document.uri, but=params.text_document.version)
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
        ls.stop_checks(uri)
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
        for job in ls.jobs.values():
            job.stop.set()

    @server.feature(types.EXIT)
    def exit_now(ls: SkillServer, params: Any) -> None:
        # at once, even while a check runs in a thread (it cannot be interrupted, and
        # nothing of it is worth waiting for: the server writes no file)
        sys.stdout.flush()
        os._exit(0 if ls.protocol._shutdown else 1)

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
        found = ls.buffer(uri)
        if found is None:
            return empty
        text = found[1]
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
    make_server().start_io(stdin=FramedReader(sys.stdin.buffer))  # type: ignore[arg-type]
    # the client closed our input: end now, without waiting for a check still running
    sys.stdout.flush()
    os._exit(0)
