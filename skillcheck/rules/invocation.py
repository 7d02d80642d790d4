"""SK707-SK709: what happens when a skill is invoked, beyond what its text says.

Claude Code renders SKILL.md as a template before the model reads it: it runs the shell
commands written as `` !`command` `` (and in `` ```! `` blocks) and replaces `$ARGUMENTS`,
`$ARGUMENTS[N]` and `$N` with the invocation's arguments. Scripts that stop to ask for
keyboard input hang an agent, which has no keyboard. These rules report each of these where
it is written.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass

from skillcheck.rules.base import Context, rule, usable_frontmatter
from skillcheck.source.anchors import mark_lines
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.load import read_file, read_text
from skillcheck.source.skill import Finding, Impact, Outcome, Pos, Severity, Skill, SkillFile, Span
from skillcheck.targets import every

MAX_PER_FILE = 20  # findings of one rule listed per file


@dataclass(frozen=True)
class _Line:
    number: int  # in the file
    text: str
    fence: str | None  # the info string of the fenced block holding the line, or None


_FENCE = LazyPattern(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)")
_CLOSE = LazyPattern(r"^ {0,3}(`{3,}|~{3,})\s*$")


def _body_lines(skill: Skill) -> Iterator[_Line]:
    """The SKILL.md body line by line, with the fenced block each line is in (fence lines
    themselves are outside)."""
    doc = skill.doc
    if doc is None:
        return
    fence: tuple[str, str] | None = None  # (marker, info string)
    for index, text in enumerate(doc.body.split("\n")):
        number = doc.body_line + index
        if fence is None:
            opened = _FENCE.match(text)
            if opened:
                fence = (opened.group(1), opened.group(2))
            yield _Line(number, text, None)
            continue
        closed = _CLOSE.match(text)
        if closed and closed.group(1)[0] == fence[0][0] and len(closed.group(1)) >= len(fence[0]):
            fence = None
            yield _Line(number, text, None)
            continue
        yield _Line(number, text, fence[1])


# --- SK707 inline shell commands ---------------------------------------------------------------

# `` !`git status` `` after a space or at the start of a line (Claude Code's form)
_BANG = LazyPattern(r"(?:^|(?<=\s))!`([^`\n]+)`")


@rule(
    "SK707",
    "shell-on-invocation",
    Severity.INFO,
    "SKILL.md has `` !`command` `` lines, which Claude Code runs when the skill is invoked.",
    what="""
        Reports each `` !`command` `` in the SKILL.md body (after a space or at the start of a
        line) and each fenced block opened with `` ```! ``. Claude Code runs these commands
        in a shell when the skill is invoked, before the model reads the skill, and puts
        their output in place of the command. It does so inside code fences and inline code
        too (checked with Claude Code 2.1.332): an example in a fence is an error for the
        `claude-code` target, since invoking the skill runs it, or fails with "Shell command
        permission check failed" when `allowed-tools` does not grant it. `! `cmd`` (a space
        after `!`) is left alone.
    """,
    why="""
        The command runs on the user's machine with the user's permissions every time the
        skill is used, whether the user or the model invoked it, and without a permission
        prompt for what `allowed-tools` allows. A reviewer installing the skill must see
        every such command. Other runtimes show the text as it is, so the model there never
        gets the output the instructions rely on.
    """,
    bad="""
        ## Context
        - Current branch: !`git branch --show-current`
    """,
    good="""
        ## Context
        - Current branch: !`git branch --show-current`
        (reviewed: read-only, no network; keep it, or run `git branch --show-current` as a
        step of the instructions)
    """,
)
def shell_on_invocation(skill: Skill, ctx: Context) -> Iterator[Finding]:
    doc = skill.doc
    if doc is None or ("!`" not in doc.body and "```!" not in doc.body):
        return
    count = 0
    for line in _body_lines(skill):
        found: list[tuple[int, int, str]] = []
        opened = _FENCE.match(line.text)
        if line.fence is None and opened and opened.group(2).startswith("!"):
            start = line.text.index(opened.group(1))
            found.append((start, len(line.text.rstrip()), "a '```!' block"))
        for match in _BANG.finditer(line.text):
            command = " ".join(match.group(1).split())
            shown = command if len(command) <= 50 else command[:49] + "…"
            found.append((match.start(), match.end(), f"!`{shown}`"))
        for start, end, what in found:
            count += 1
            if count > MAX_PER_FILE:
                return
            span = Span(Pos(line.number, start + 1), Pos(line.number, max(end, start + 1) + 1))
            if line.fence is not None and what.startswith("!`"):
                # an example meant to be shown: Claude Code runs it anyway (checked with
                # 2.1.332), and without an allowed-tools grant the invocation fails
                yield Finding(
                    f"{what} is inside a code fence, but Claude Code still runs it when the"
                    " skill is invoked, and the invocation fails unless allowed-tools grants"
                    " the command; write the example as '! `…`' (a space after '!'), which"
                    " Claude Code leaves alone",
                    span=span,
                    impact=every(Impact(Outcome.OK, Severity.INFO), {"claude-code": _FENCED}),
                )
                continue
            yield Finding(
                f"{what} runs a shell command when Claude Code invokes the skill, before the"
                " model reads it; review what it does (other runtimes show the text as is)",
                span=span,
            )


# an error (the invocation fails without a grant), but the skill loads and is listed and
# offered as written (checked with 2.1.332): its load outcome is `ok`
_FENCED = Impact(Outcome.OK, Severity.ERROR)


# --- SK708 interactive scripts ------------------------------------------------------------------

_PY_PROMPT = LazyPattern(
    # `input(` with no space: "parse the input (simplified)" in a docstring is prose
    r"(?<![\w.])(?:raw_)?input\(|\bgetpass\.getpass\s*\(|(?<![\w.])getpass\s*\("
    r"|\b(?:click|typer)\.(?:prompt|confirm)\s*\(|\b(?:Prompt|Confirm|IntPrompt)\.ask\s*\("
    r"|\bquestionary\.\w+\s*\(|\binquirer\.prompt\s*\("
)
_SH_PROMPT = LazyPattern(
    r"(?<![\w-])read\s+(?:-\w+\s+)*-[a-zA-Z]*[ps]\b|\bRead-Host\b|\bselect\s+\w+\s+in\b"
)
_JS_PROMPT = LazyPattern(
    r"\.question\s*\(|\binquirer\.prompt\s*\(|(?<![\w.])prompt\s*\(\s*['\"`]"
    r"|\bprompts\s*\(\s*\{|\breadlineSync\.\w+\s*\("
)
# a script that checks for a terminal or takes a flag to skip its questions has a
# non-interactive path the agent can use (every branch starts with a literal, `CI`'s word
# boundary a lookbehind after it: as `\bCI` the whole pattern was tried at every offset,
# 7x slower on the corpus's scripts)
_NON_INTERACTIVE = LazyPattern(
    r"isatty|\[\[? -t [01] \]\]?|--yes\b|--non-interactive|--no-input|--no-prompt|--assume-yes"
    r"|--batch\b|CI(?<!\wCI)\b|isTTY|-NonInteractive|\[switch\]\$Force|--force\b"
    # questions asked only on request (`--interactive`, `args.interactive`)
    r"|--interactive\b|\.interactive\b"
    # or in an explicit interactive mode (`if mode == "interactive":`, `interactive_mode()`)
    r"|[\"']interactive[\"']|\binteractive_mode\b|\bdef \w*interactive\w*\("
)
# Words every match of the pattern contains (case as the patterns have it): a line without
# any of them cannot match, and `in` finds a word ~10x faster than the patterns scan a line
# (their alternatives start with lookbehinds, which the regex engine tries at every offset).
_PROMPT_WORDS = {
    "python": ("input", "getpass", "prompt", "confirm", ".ask", "questionary"),
    "shell": ("read", "Read-Host", "select"),
    "javascript": (".question", "prompt", "readlineSync."),
}
_PY_SUFFIXES = (".py",)
_SH_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh", ".command")
_JS_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")
_PS_SUFFIXES = (".ps1", ".psm1")


def _language(entry: SkillFile, head: bytes) -> str | None:
    lower = entry.rel.lower()
    first = head.split(b"\n", 1)[0] if head.startswith(b"#!") else b""
    if lower.endswith(_PY_SUFFIXES) or b"python" in first:
        return "python"
    if lower.endswith(_SH_SUFFIXES + _PS_SUFFIXES) or re.search(rb"\b(?:ba|z|k|da)?sh\b", first):
        return "shell"
    if lower.endswith(_JS_SUFFIXES) or b"node" in first or b"deno" in first or b"bun" in first:
        return "javascript"
    return None


def _is_script(entry: SkillFile) -> bool:
    """Files under scripts/ and script files at the skill root (not examples in assets/)."""
    return entry.kind == "file" and (entry.rel.startswith("scripts/") or "/" not in entry.rel)


def _comment(line: str, language: str) -> bool:
    stripped = line.lstrip()
    return stripped.startswith("//" if language == "javascript" else "#")


_HOW = {
    "python": "take the value as an argument or environment variable, or skip the question"
    " when `sys.stdin.isatty()` is false",
    "shell": "take the value as an argument or environment variable, or skip the question"
    " when `[ -t 0 ]` fails",
    "javascript": "take the value as an argument or environment variable, or skip the question"
    " when `process.stdin.isTTY` is false",
}


@rule(
    "SK708",
    "interactive-script",
    Severity.WARNING,
    "A script waits for keyboard input, which hangs an agent.",
    what="""
        Reports, in files under `scripts/` and script files at the skill root, calls that
        stop and wait for a person to type: Python `input()`, `getpass()`, `click.prompt`,
        `rich` `Prompt.ask`, `questionary`; shell `read -p` / `read -s`, `select … in`,
        PowerShell `Read-Host`; Node `readline` `.question()`, `inquirer.prompt`, `prompt()`.
        A script that has a non-interactive path is not reported: one that checks for a
        terminal (`isatty`, `[ -t 0 ]`, `process.stdin.isTTY`), takes a flag such as
        `--yes`, `--non-interactive` or `--no-input`, or asks only on request
        (`--interactive`, a mode named `"interactive"`, an `interactive_mode` or a function
        `def run_interactive(...)` holding the questions). Comment lines are skipped.
    """,
    why="""
        An agent runs scripts without a terminal it can type into: a prompt waits until the
        command times out, and the agent either gives up or retries the same hang. Values a
        script needs belong in its arguments or environment, where the skill's instructions
        can pass them.
    """,
    bad="""
        scripts/deploy.py:   env = input("Environment (staging/production)? ")
    """,
    good="""
        scripts/deploy.py:   env = args.environment  # --environment staging|production
    """,
)
def interactive_script(skill: Skill, ctx: Context) -> Iterator[Finding]:
    for entry in skill.files:
        if not _is_script(entry):
            continue
        head = read_file(skill, entry)
        if not head:
            continue
        language = _language(entry, head[:200])
        if language is None:
            continue
        text = read_text(skill, entry)
        words = _PROMPT_WORDS[language]
        # the words first: most scripts ask nothing, and `in` is far cheaper than the scan
        if text is None or not any(word in text for word in words):
            continue
        pattern = {"python": _PY_PROMPT, "shell": _SH_PROMPT, "javascript": _JS_PROMPT}[language]
        count = 0
        number = 1
        counted = 0  # line numbers: the line breaks before ``counted`` are in ``number``
        interactive: bool | None = None  # whether the script has no non-interactive path
        # only the lines holding a word (mark_lines finds them without splitting the text)
        for start, end, _ in mark_lines(text, words):
            line = text[start:end]
            match = pattern.search(line)
            if match is None or _comment(line, language):
                continue
            if line[: match.start()].rstrip().endswith("def"):
                continue  # `def input(...)` defines, not asks
            # looked for at the first question: most scripts holding a word ask nothing
            if interactive is None:
                interactive = _NON_INTERACTIVE.search(text) is None
            if not interactive:
                break
            number += text.count("\n", counted, start)
            counted = start
            count += 1
            if count > MAX_PER_FILE:
                break
            call = match.group().rstrip("( ")
            yield Finding(
                f"{entry.rel} waits for keyboard input ({call.strip()!r}), which an agent"
                f" cannot give, so the run hangs; {_HOW[language]}",
                span=Span(Pos(number, match.start() + 1), Pos(number, match.end() + 1)),
                path=entry.path,
            )


# --- SK709 argument substitution ----------------------------------------------------------------

# what Claude Code replaces: `$0`, `$1`, … not followed by a word character, and
# `$ARGUMENTS[N]`; `${1}` and `$(1)` are left alone
_POSITIONAL = LazyPattern(r"\$(\d+)(?!\w)")
_PRICE_TAIL = LazyPattern(r"[.,]\d")
# `$N` from here on is rewritten only by an invocation of more than N shell-split arguments:
# a sentence typed after the slash command rarely has ten words and never 26 (`$25,000`)
_MANY_ARGUMENTS = 10
# fence info strings of shell code, where `${1}` is the same positional parameter as `$1`
_SHELL_INFO = LazyPattern(r"(?:ba|z|k|da)?sh|shell|console|shell-session|terminal")
_AWK = LazyPattern(r"\bawk\b|\{\s*print\b|\bprintf?\s*\(?\s*\$\d")
_CODE_SPAN = LazyPattern(r"`[^`\n]+`")
# the skill is listed and offered as written (checked with 2.1.332): the text changes only
# when it is invoked with arguments, so its load outcome stays `ok`
_CLAUDE_CODE = {"claude-code": Impact(Outcome.OK, Severity.WARNING)}


def _uses_arguments(skill: Skill) -> bool:
    """Whether the skill means to take arguments: `argument-hint`, `arguments`, or
    `$ARGUMENTS` in its body. Then `$1` in prose or a command is probably meant."""
    fm = usable_frontmatter(skill)
    if fm is not None and ("argument-hint" in fm.fields or "arguments" in fm.fields):
        return True
    doc = skill.doc
    return doc is not None and "$ARGUMENTS" in doc.body


# a placeholder written as a piece of syntax: alone in a code span (`` `$ARGUMENTS` ``,
# `` `$1` ``, `` `$ARGUMENTS[0]` ``) on a line that talks about the syntax itself
_PLACEHOLDER_SPAN = LazyPattern(r"(?<=`)\$(?:ARGUMENTS(?:\[\d+\])?|\d)(?=`)")
_ABOUT_SYNTAX = LazyPattern(
    r"\b(?:placeholders?|variables?|syntax|substitut\w*|replaced|expands?|expanded"
    r"|interpolat\w*|positional|shorthand)\b",
    re.IGNORECASE,
)


def _taught_placeholder(line: _Line) -> re.Match[str] | None:
    """The first `$ARGUMENTS` / `$N` a line shows as syntax (alone in a code span, on a
    line about placeholders or substitution), outside fenced blocks; None otherwise."""
    if line.fence is not None or "`$" not in line.text:
        return None
    found = _PLACEHOLDER_SPAN.search(line.text)
    if found is None or _ABOUT_SYNTAX.search(line.text) is None:
        return None
    return found


def _code_spans(text: str) -> tuple[list[int], list[int]]:
    """(starts, ends) of the code spans of a line, in order."""
    spans = [m.span() for m in _CODE_SPAN.finditer(text)]
    return [start for start, _ in spans], [end for _, end in spans]


def _in_code_span(spans: tuple[list[int], list[int]], offset: int) -> bool:
    starts, ends = spans
    k = bisect_left(starts, offset) - 1  # the last span that starts before ``offset``
    return k >= 0 and offset < ends[k]


@rule(
    "SK709",
    "argument-substitution",
    Severity.WARNING,
    "`$0`, `$1`… in SKILL.md are replaced by Claude Code's invocation arguments.",
    what="""
        For the `claude-code` target, reports `$N` (`$0`, `$1`, `$10`…, not followed by a
        letter, digit or `_`) in the SKILL.md body where it is not meant as an argument:
        amounts of money (`$0.50`, `$1,000`, `$20`), awk fields (`awk '{print $1}'`), and,
        in a skill that takes no arguments (no `argument-hint`, no `arguments`, no
        `$ARGUMENTS`), any `$N` in code (shell positional parameters, regex
        back-references). One finding per line, the first such `$N` on it. References and
        scripts are not rewritten and are not checked. `$N` is replaced only when the
        invocation passes at least N+1 arguments (a missing one stays as written), so
        `$10` and above (`$25,000`, `$248.4M`) are not reported: they need a sentence of
        11 words or more after the slash command. The advice follows the snippet's
        language: `${N}` in shell code (the same parameter to the shell), a file under
        `scripts/` or `references/` anywhere else (`${1}` is not a SQL placeholder or a
        JavaScript replacement group). A skill that teaches the syntax itself (a line that
        shows `` `$ARGUMENTS` ``, `` `$ARGUMENTS[0]` `` or `` `$1` `` alone in a code span
        and speaks of placeholders, variables, syntax or substitution, in a skill that
        names `$ARGUMENTS` somewhere: `$1` beside `?` and `:name` is SQL's) is reported too:
        the lesson is rewritten into the user's arguments. A placeholder used as one
        ("Fix the issue: $ARGUMENTS", a command in a fenced block) is not.
    """,
    why="""
        Claude Code renders SKILL.md as a template when the skill is invoked with
        arguments: `$N` becomes the N-th argument (shell-split, counted from 0) when the
        invocation has one, and stays as written when it has not. So `/skill report.csv`
        turns `awk '{print $0}'` into `awk '{print report.csv}'` and "costs $0.50" into
        "costs report.csv.50". skillcheck knows no escape for `$` that Claude Code honours:
        move the snippet into a script or a reference file, or write it without a `$`
        before a digit (awk `$(1)`, shell `${1}`, "0.50 USD").
    """,
    bad="""
        Count the authors: `git log --format='%an' | awk '{print $1}' | sort -u`
    """,
    good="""
        Count the authors: `git log --format='%an' | awk '{print $(1)}' | sort -u`
    """,
)
def argument_substitution(skill: Skill, ctx: Context) -> Iterator[Finding]:
    doc = skill.doc
    if doc is None or "claude-code" not in ctx.targets or "$" not in doc.body:
        return
    intended = _uses_arguments(skill)
    count = 0
    teaches: bool | None = None  # whether the skill speaks of `$ARGUMENTS`: asked once
    for line in _body_lines(skill):
        if "$" not in line.text:
            continue
        taught = _taught_placeholder(line) if teaches is not False else None
        if taught is not None and teaches is None:
            # a skill about arguments names `$ARGUMENTS` somewhere (`$1` alone on a line about
            # placeholders is mostly SQL's: `?`, `$1`, `:name`)
            teaches = "$ARGUMENTS" in doc.body
            if not teaches:
                taught = None
        if taught is not None:
            start, end = taught.span()
            count += 1
            if count > MAX_PER_FILE:
                return
            yield Finding(
                f"'{taught.group()}' is shown here as the syntax of an argument, but Claude"
                " Code replaces it with the invocation's arguments before the model reads"
                " this text, so the lesson reads as whatever the user typed; move the"
                " explanation into a file under references/ (references are not rewritten)"
                " and point to it",
                span=Span(Pos(line.number, start + 1), Pos(line.number, end + 1)),
                impact=_CLAUDE_CODE,
            )
            continue
        # what holds for the whole line, found once: per `$N` it made a long line quadratic
        awk: bool | None = None
        spans: tuple[list[int], list[int]] | None = None
        for match in _POSITIONAL.finditer(line.text):  # the first one on a line is enough
            start, end = match.span()
            tail = line.text[end : end + 2]
            number = match.group(1)
            if awk is None:
                awk = _AWK.search(line.text) is not None
            if spans is None and not intended and line.fence is None:
                spans = _code_spans(line.text)
            if int(number) >= _MANY_ARGUMENTS:
                # `$25,000`, `$248.4M`: rewritten only by an invocation of 26 or 249
                # arguments; a missing argument leaves `$N` as written
                continue
            if _PRICE_TAIL.match(tail) or len(number) >= 2:
                kind = "an amount of money"
                advice = "write the amount without '$' before a digit ('0.50 USD')"
            elif awk:
                kind = "an awk field"
                advice = f"write it as '$({number})', which awk reads the same"
            elif not intended and (
                line.fence is not None or (spans is not None and _in_code_span(spans, start))
            ):
                kind = "a positional parameter"
                if _SHELL_INFO.fullmatch((line.fence or "").strip().lower()):
                    advice = (
                        f"write it as '${{{number}}}', which the shell reads the same, or move"
                        " the snippet into a script under scripts/ (scripts and references are"
                        " not rewritten)"
                    )
                else:
                    # SQL `$1` placeholders, JS replacement strings, regex back-references:
                    # `${1}` means something else there; a file is not rewritten
                    advice = (
                        "move the snippet into a file under scripts/ or references/ (they are"
                        " not rewritten) and point to it"
                    )
            else:
                continue
            count += 1
            if count > MAX_PER_FILE:
                return
            needed = int(number) + 1
            yield Finding(
                f"'{match.group()}' ({kind}) is replaced by Claude Code with argument {number}"
                f" of the invocation (counted from 0) when the skill is invoked with at least"
                f" {needed} argument{'s' if needed > 1 else ''} (a missing one stays as"
                f" written); {advice}",
                span=Span(Pos(line.number, start + 1), Pos(line.number, end + 1)),
                impact=_CLAUDE_CODE,
            )
            break
