"""What a skill is capable of doing to the machine it runs on, read from all its text files.

The SK71x rules report capabilities, not samples: a skill (its SKILL.md, references and
scripts read together, never anything outside it) that sends host or credential data to the
network, downloads and runs code, reads credential or agent-memory locations, tells the agent
to hide what it does, runs encoded payloads, installs itself to run again later, or talks to
raw-IP and paste-site endpoints. Each capability found is a ``Signal``; one scan per skill
and run (a ``Memo``) feeds every rule.

Severity follows the evidence (``Threats.severity``): a signal that is proof by itself
(``strong``: data read from the host and sent in the same command, a decoded payload run, a
password-protected download) is an error; so is a chain, two different capabilities in the
same skill (read secrets AND send; hide AND run). A lone weak signal is a warning. Signals in
context that documents or tests the pattern rather than doing it (a line naming an attack or
a detection, a regular expression, a file under tests/, a skill whose name or description
says it is a security tool) never make an error.

Every pattern is bounded (no unbounded gap, no nested repetition), so the scan stays linear
in the size of the skill.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from skillcheck.source.lazy import LazyPattern
from skillcheck.source.load import read_text
from skillcheck.source.skill import Memo, Severity, Skill, Span
from skillcheck.source.text import LinePositions

MAX_SIGNALS = 200  # per skill: a file full of matches costs no more than this
LINE_WINDOW = 400  # characters of a line looked at around a match (minified files)


class Capability(StrEnum):
    SEND = "send"  # host, environment or credential data to the network
    FETCH_RUN = "fetch-run"  # download and run code
    SECRETS = "secrets"  # read credential and agent-memory locations
    CONCEAL = "conceal"  # hide actions from the user, steer the agent off its task
    OBFUSCATION = "obfuscation"  # encoded or built-up commands, padding
    PERSISTENCE = "persistence"  # run again later: shell rc, cron, launch agents, hooks
    ENDPOINT = "endpoint"  # raw IP addresses, paste and request-catcher sites


@dataclass(frozen=True)
class Signal:
    capability: Capability
    path: Path
    span: Span
    what: str  # the evidence, for the message ("reads ~/.ssh/id_rsa")
    shown: str  # the matched text, shortened
    strong: bool = False  # proof by itself
    documented: bool = False  # in a context that documents or tests the pattern
    hint: bool = False  # too common in honest skills to count in a chain: a warning only


@dataclass
class Threats:
    signals: list[Signal] = field(default_factory=list)
    security_tool: bool = False  # the skill says it is a security tool (scanner, audit…)

    def capabilities(self) -> set[Capability]:
        return {s.capability for s in self.signals if not (s.documented or s.hint)}

    def severity(self, signal: Signal) -> Severity:
        """Error for proof or a chain of two capabilities, else warning."""
        if signal.documented or signal.hint or self.security_tool:
            return Severity.WARNING
        if signal.strong:
            return Severity.ERROR
        others = self.capabilities() - {signal.capability}
        chained = any(
            signal.capability in pair and pair - {signal.capability} <= others for pair in _CHAINS
        )
        return Severity.ERROR if chained else Severity.WARNING


# the pairs of capabilities that make a chain: each is a step of an attack only together
_CHAINS: tuple[frozenset[Capability], ...] = tuple(
    frozenset(pair)
    for pair in (
        (Capability.SECRETS, Capability.SEND),
        (Capability.SECRETS, Capability.ENDPOINT),
        (Capability.SECRETS, Capability.CONCEAL),
        (Capability.SECRETS, Capability.OBFUSCATION),
        (Capability.CONCEAL, Capability.SEND),
        (Capability.CONCEAL, Capability.FETCH_RUN),
        (Capability.CONCEAL, Capability.PERSISTENCE),
        (Capability.CONCEAL, Capability.ENDPOINT),
        (Capability.OBFUSCATION, Capability.FETCH_RUN),
        (Capability.OBFUSCATION, Capability.SEND),
        (Capability.OBFUSCATION, Capability.ENDPOINT),
        (Capability.ENDPOINT, Capability.FETCH_RUN),
        (Capability.ENDPOINT, Capability.SEND),
        (Capability.PERSISTENCE, Capability.FETCH_RUN),
        (Capability.PERSISTENCE, Capability.SEND),
    )
)


# --- context -----------------------------------------------------------------------------------

# a line that shows, detects or warns about a pattern rather than using it
DOCUMENTS = LazyPattern(
    r"\b(?:attack(?:er|ers|s)?|payloads?|malicious|malware|exploits?|exfiltrat\w*|threats?"
    r"|red[- ]flags?|detect(?:s|ed|ion|or)?|scann(?:er|ing)|vulnerab\w*|injection|phishing"
    r"|suspicious|indicators?|IOCs?|signatures?|example of|e\.g\.|such as|regex|pattern"
    r"|flag(?:s|ged)?|block(?:s|ed)?|warn(?:s|ing)?|forbid\w*|dangerous|unsafe|risky)\b",
    re.IGNORECASE,
)
# a regular expression or a string table of patterns (a scanner's own rules)
_REGEX_LINE = LazyPattern(r"\\[bdsw]|\(\?[:i!=<]|re\.compile|new RegExp|\[\^|\.\*|\\\.")
_SECURITY_TOOL = LazyPattern(
    r"\b(?:secur\w*|audit\w*|scan\w*|threat\w*|malware|pen-?test\w*|vulnerab\w*|red[- ]?team"
    r"|forensic\w*|incident|detect\w*|guard\w*|harden\w*|compliance|sandbox\w*|hardening"
    r"|prompt[- ]injection|exfiltration|privilege[- ]escalation|exploit\w*|offensive|ctf"
    r"|hack\w*|penetration|attack\w*|phishing|intrusion|siem|soc)\b",
    re.IGNORECASE,
)
_TEST_PATH = LazyPattern(r"(?:^|/)(?:tests?|fixtures?|__tests__|spec|testdata)/|(?:^|/)test_[^/]*$")
_NEGATED = LazyPattern(r"\b(?:never|don'?t|do not|must not|avoid|instead of|no)\b", re.IGNORECASE)


def _line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    lo = text.rfind("\n", max(0, start - LINE_WINDOW), start) + 1 or max(0, start - LINE_WINDOW)
    hi = text.find("\n", end, end + LINE_WINDOW)
    return lo, hi if hi >= 0 else min(len(text), end + LINE_WINDOW)


def _documented(text: str, start: int, end: int, test_file: bool) -> bool:
    if test_file:
        return True
    lo, hi = _line_bounds(text, start, end)
    line = text[lo:hi]
    if DOCUMENTS.search(line) is not None or _REGEX_LINE.search(line) is not None:
        return True
    # the line before (a heading or a lead-in: "Red flags:", "Never do this:")
    prev_lo, _ = _line_bounds(text, max(0, lo - 2), max(0, lo - 1))
    previous = text[prev_lo : max(prev_lo, lo - 1)]
    return DOCUMENTS.search(previous) is not None


CONTINUED_LINES = 20  # backslash-continued lines of one shell command looked at


def _command_end(text: str, hi: int) -> int:
    """The end of the shell command whose first line ends at ``hi``: a request's data often
    sits on the lines it continues with a trailing backslash."""
    for _ in range(CONTINUED_LINES):
        if hi <= 0 or hi >= len(text) or text[hi - 1] != "\\":
            break
        nxt = text.find("\n", hi + 1)
        hi = len(text) if nxt < 0 else nxt
    return hi


# --- the patterns ------------------------------------------------------------------------------

# credential and agent-memory locations (a read of one is a SECRETS signal)
_SECRET_PLACES = LazyPattern(
    r"(?P<place>"
    r"\.ssh/(?:id_\w+|authorized_keys|known_hosts|config)?|\bid_(?:rsa|dsa|ecdsa|ed25519)\b"
    r"|\.aws/(?:credentials|config)|\.kube/config|\.docker/config\.json|\.gnupg\b|\.netrc\b"
    r"|\.git-credentials|\.config/gh/hosts\.yml|\.npmrc\b|\.pypirc\b"
    r"|\bkeychains?\b|login\.keychain|find-(?:generic|internet)-password|dump-keychain"
    r"|\bLogin Data\b|\bCookies\.sqlite|/Cookies\b|\bcookies\.json|Local State\b"
    r"|wallet\.dat|\.electrum|\bmetamask\b|\bExodus\b|\bseed phrases?\b|\bmnemonic\b|keystore"
    r"|\.(?:clawdbot|openclaw|moltbot)/(?:[\w.-]+/){0,4}?(?:\.env|credentials|auth-profiles\.json"
    r"|sessions)\b"
    r"|\.clawdbot\b|\.openclaw\b|\.moltbot\b|\bSOUL\.md\b|\bMEMORY\.md\b|\bIDENTITY\.md\b"
    r"|/etc/(?:shadow|passwd|sudoers)\b|\.bash_history|\.zsh_history"
    r"|\.claude/\.credentials|\.config/gcloud|application_default_credentials"
    r")",
    re.IGNORECASE,
)
# named by honest skills that manage them (memory files, a credential store's own code)
_HINT_PLACES = LazyPattern(
    r"SOUL\.md|MEMORY\.md|IDENTITY\.md|keychains?$|keystore|known_hosts|\.ssh/(?:config)?$"
    # the agent's own config folder, which honest OpenClaw skills read for their settings; its
    # credential files (`.env`, `credentials`, `auth-profiles.json`, sessions) stay a read
    r"|^\.(?:clawdbot|openclaw|moltbot)$"
    r"|\.npmrc|\.pypirc|gcloud|mnemonic|Local State",
    re.IGNORECASE,
)
# verbs that read, copy or collect a file (a place merely named is not read)
_READ_VERBS = LazyPattern(
    r"\b(?:cat|less|more|head|tail|cp|scp|rsync|tar|zip|base64|xxd|strings|grep|find|ls"
    r"|read\w*|open|load\w*|collect\w*|gather\w*|harvest\w*|extract\w*|dump\w*|copy\w*"
    r"|steal\w*|grab\w*|fetch\w*|get\w*|access\w*|includ\w*|attach\w*|upload\w*|send\w*"
    r"|readFileSync|readFile|read_text|read_bytes|glob|walk|scan)\b|<\s*[~$/]|@[~$/.]",
    re.IGNORECASE,
)
# a `.env` file read whole (the project's own variables are read by name, not cat'ed)
_DOTENV_READ = LazyPattern(r"(?:\bcat\s+|@|<\s*|open\(\s*[\"'])(?:[\w./~$-]*/)?\.env\b(?![\w.-])")

# host, identity and environment data gathered in place
_HOST_DATA = (
    r"(?:\$\(\s*(?:uname|whoami|hostname|id|env|printenv|ifconfig|ip\s+a|ls\s|pwd)\b"
    # a file read into a request only when it is the system's: a script reads its own files,
    # and credential files are SECRETS places
    r"|`(?:uname|whoami|hostname|id|env|printenv)\b"
    r"|\$\(\s*cat\s+[\"']?/(?:etc|proc)/"
    r"|\bos\.environ\b(?!\s*[\[.]\s*(?:get\b|\[)|\s*\[)|json\.dumps\(\s*dict\(\s*os\.environ"
    r"|JSON\.stringify\(\s*process\.env\s*\)|\bprocess\.env\s*\)"
    r"|\bplatform\.(?:node|uname)\(|socket\.gethostname\(|getpass\.getuser\(|os\.getlogin\("
    r"|Get-ChildItem\s+env:|\$env:COMPUTERNAME|\$env:USERNAME"
    r"|@(?:~|\$HOME)?/?\.(?:ssh|aws|env)\b|@/etc/)"
)
_SENDERS = (
    r"(?:\bcurl\b[^\n|;]{0,300}?\s(?:-d|--data(?:-\w+)?|-F|--form|-T|--upload-file|-X\s*POST)\b"
    r"|\bwget\b[^\n|;]{0,300}?--post-(?:data|file)"
    r"|\b(?:requests|httpx|axios|session|client)\.(?:post|put)\s*\("
    r"|\bfetch\s*\([^\n]{0,200}method\s*:\s*[\"']POST"
    r"|\burlopen\s*\(|\bInvoke-(?:RestMethod|WebRequest)\b[^\n]{0,200}-Method\s+Post"
    r"|\b(?:nc|ncat|netcat)\s+(?:-\w+\s+)*[\w.-]+\s+\d{2,5}\b|/dev/tcp/)"
)
_HOST = LazyPattern(_HOST_DATA, re.IGNORECASE)
HOST_LINES_BEFORE = 8  # lines of a script before a request searched for the data it sends
_SEND_ANY = LazyPattern(_SENDERS, re.IGNORECASE)
# an instruction to send credentials or private data somewhere
_SEND_TEXT = LazyPattern(
    r"\b(?:send|upload|post|transmit|forward|exfiltrate|beam|report|sync|mirror|back\s?up"
    r"|copy|email|leak|share|submit)\w*\b[^\n.]{0,120}?\b(?:credentials?|api[_ -]?keys?"
    r"|secrets?|tokens?|passwords?|private keys?|ssh keys?|environment variables|env vars"
    r"|\.env\b|cookies|session (?:data|tokens?)|wallets?|seed phrases?|mnemonics?"
    r"|conversation (?:history|logs?)|chat history|memory files?|system prompt)"
    r"[^\n.]{0,160}?(?:\bto\b|\binto\b|=>|->)[^\n.]{0,80}?"
    r"(?:(?P<address>https?://|\b\d{1,3}(?:\.\d{1,3}){3}\b|[\w.+-]+@[\w-]+\.[\w.]+)|\bwebhook"
    r"|\bendpoint|\bserver\b|\bremote\b|\bexternal\b|\bthird[- ]party)",
    re.IGNORECASE,
)

_DOWNLOAD = r"(?:\bcurl\b|\bwget\b|Invoke-WebRequest|\biwr\b|urlretrieve|\bdownload\w*\b)"
# a downloaded file made executable or run: `curl -o x …; chmod +x x`
_CHMOD_DOWNLOAD = LazyPattern(
    rf"{_DOWNLOAD}[^\n]{{0,300}}?(?:&&|;|\|\||\n)\s*(?:sudo\s+)?chmod\s+(?:[+ugoa]*x|[0-7]*[157])\b",
    re.IGNORECASE,
)
# `curl -o /tmp/x …` then running it: `&& /tmp/x`, `&& ./x`, `&& bash x`
_DOWNLOAD_RUN = LazyPattern(
    r"\b(?:curl|wget)\b[^\n]{0,300}?\s(?:-o|-O|--output)\s+(?P<file>[\w./~$-]+)[^\n]{0,200}?"
    r"(?:&&|;)\s*(?:sudo\s+)?(?:(?:ba|z)?sh\s+|python3?\s+|\./|/tmp/)",
    re.IGNORECASE,
)
_ARCHIVE_PASSWORD = LazyPattern(
    r"\b(?:unzip\s+(?:-\w+\s+)*-P\s*\S|7za?\s+x\b[^\n]{0,100}?\s-p\S|unrar\s+x\s+-p\S)"
    r"|\b(?:zip|archive|rar|7z)\b[^\n]{0,120}?\bpass(?:word|code|phrase)\s*(?:is\s*)?[:=]\s*[`\"'*]*"
    r"[\w!@#$%^&*-]{3,}"
    r"|\bpass(?:word|phrase)(?:-protected|\s+protected)\s+(?:zip|archive|rar|7z)\b",
    re.IGNORECASE,
)
_PASTE_TERMINAL = LazyPattern(
    r"\b(?:copy|paste)\b[^\n]{0,80}?\b(?:in|into)\s+(?:your\s+|a\s+|the\s+)?"
    r"(?:terminal|command prompt|powershell|cmd|shell|run dialog)\b"
    r"|\b(?:open|launch)\s+(?:a\s+|the\s+|your\s+)?terminal\s+and\s+(?:paste|run)\b",
    re.IGNORECASE,
)
_FAKE_PREREQ = LazyPattern(
    r"\b(?:must|needs? to|has to|should)\s+(?:be\s+)?(?:installed|running|downloaded)"
    r"\s+(?:before|first|prior)|\brequires?\s+[\w .-]{1,40}?\s+to\s+be\s+installed"
    r"|\bprerequisite|\bbefore\s+using\s+this\s+skill|\binstall\s+[\w.-]{1,40}\s+first\b",
    re.IGNORECASE,
)
# "OpenThing must be installed before using this skill. Download it from: https://…"
_PREREQ_DOWNLOAD = LazyPattern(
    r"\b(?:must\s+be\s+installed\s+before\s+using\s+this\s+skill|before\s+using\s+this\s+skill"
    r"[^\n]{0,40}?\binstall)[^\n]{0,200}?\n?[^\n]{0,120}?\b(?:download|get|install)\w*\b[^\n]{0,80}?"
    r"\bfrom\b[^\n]{0,20}?https?://",
    re.IGNORECASE,
)
_BINARY_URL = LazyPattern(
    r"https?://[^\s)\"'`<>]{1,200}?(?:\.(?:exe|msi|dmg|pkg|zip|rar|7z|scr|bat|cmd|vbs|jar"
    r"|appimage|run|bin)\b(?![\w.])"
    r"|\.(?:vercel\.app|netlify\.app|pages\.dev|glitch\.me|herokuapp\.com|workers\.dev"
    r"|repl\.co|onrender\.com|web\.app|firebaseapp\.com)\b)",
    re.IGNORECASE,
)

_DECODE = (
    r"(?:base64\s+(?:-d|-D|--decode)\b|b64decode|atob\s*\(|Buffer\.from\([^\n)]{0,300}?"
    r"base64|FromBase64String|xxd\s+-r|openssl\s+(?:enc\s+)?-d|codecs\.decode|bytes\.fromhex"
    r"|zlib\.decompress|marshal\.loads|rot13|\\x[0-9a-f]{2}(?:\\x[0-9a-f]{2}){7})"
)
_RUNNER = (
    r"(?:\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b|\|\s*python3?\b|\|\s*perl\b|\|\s*node\b|\|\s*iex\b"
    r"|\beval\b|\bexec\s*\(|\bexecSync\b|\bsubprocess\.|\bos\.system\b|Invoke-Expression"
    r"|\bnew Function\b|\bFunction\s*\(|\bcompile\s*\(|\bsh\s+-c\b|\bbash\s+-c\b|\b__import__\b)"
)
_DECODE_RUN = LazyPattern(
    rf"{_DECODE}[^\n]{{0,300}}?{_RUNNER}|{_RUNNER}[^\n]{{0,300}}?{_DECODE}", re.IGNORECASE
)
_ENCODED_COMMAND = LazyPattern(
    r"\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]{0,100}?\s-e(?:nc|ncodedcommand)?\s+[A-Za-z0-9+/=]{20,}",
    re.IGNORECASE,
)
_STRING_BUILT = LazyPattern(
    r"(?:chr\(\d+\)\s*\+\s*){4,}|(?:String\.fromCharCode\()[\d,\s]{12,}"
    r"|(?:[\"'][a-z]{1,3}[\"']\s*\+\s*){3,}[\"'][a-z]{1,3}[\"']"
    r"|\bgetattr\(\s*__import__\(",
    re.IGNORECASE,
)
_BLOB = LazyPattern(r"(?<![A-Za-z0-9+/=,;])[A-Za-z0-9+/]{300,}={0,2}(?![A-Za-z0-9+/=])")
PAD_BLANK_LINES = 60  # blank lines in a row that push text below what a reviewer reads
PAD_SPACES = 150  # spaces in a row inside a line that push text off screen
# spaces inside a line before more text (possessive: one pass over each run of spaces)
_WIDE_GAP = LazyPattern(rf"[^\s][ \t]{{{PAD_SPACES},}}+(?=\S)")


def _padding(text: str) -> tuple[int, int] | None:
    """The first padding: ``PAD_BLANK_LINES`` or more lines of only blanks followed by a
    line with text, or a run of ``PAD_SPACES`` spaces inside a line. Lines are walked once
    (a pattern for the blank lines backtracked over every start: quadratic on 400 KB)."""
    found: tuple[int, int] | None = None
    if "\n" * 12 in text:
        pos, start, count = 0, 0, 0
        while True:
            nl = text.find("\n", pos)
            line = text[pos:] if nl < 0 else text[pos:nl]
            rest = line.lstrip(" \t")
            if nl >= 0 and not rest:
                start, count = (pos, 0) if count == 0 else (start, count)
                count += 1
            else:
                if count >= PAD_BLANK_LINES and rest and not rest[0].isspace():
                    found = (start, pos)
                    break
                count = 0
            if nl < 0:
                break
            pos = nl + 1
    if " " * PAD_SPACES in text or "\t" in text:
        gap = _WIDE_GAP.search(text, 0, found[0] if found else len(text))
        if gap is not None:
            found = gap.span()
    return found


_PERSIST = LazyPattern(
    r"(?P<rc>>>?\s*(?:~|\$HOME|\$\{HOME\})/\.(?:bashrc|zshrc|bash_profile|profile|zprofile"
    r"|zshenv|config/fish/config\.fish)\b)"
    r"|(?P<cron>\bcrontab\s+(?:-\s|-l\b[^\n]{0,200}?\|\s*crontab\b|[\w./~-]+\.(?:txt|cron)\b)"
    r"|/etc/cron\.\w+|/var/spool/cron)"
    r"|(?P<launch>Library/LaunchAgents|Library/LaunchDaemons|launchctl\s+(?:load|bootstrap)"
    r"|systemctl\s+(?:--user\s+)?enable\b|/etc/systemd/system/|schtasks\s+/create"
    r"|CurrentVersion\\\\?Run\b|/etc/rc\.local|\.config/autostart)"
    r"|(?P<hook>\.git/hooks/(?:pre-commit|post-checkout|post-merge|pre-push|post-commit)"
    r"|core\.hooksPath)"
    r"|(?P<install>[\"'](?:postinstall|preinstall|install)[\"']\s*:\s*[\"'][^\"'\n]{0,200}?"
    r"(?:curl|wget|node\s+-e|bash|sh\s|python|powershell))"
    r"|(?P<site>\bsitecustomize\.py\b|\busercustomize\.py\b|site-packages/[\w-]+\.pth\b)"
    # (`->` / `=>` in a tree diagram, `CLAUDE.md -> AGENTS.md`, is an arrow, not a redirect)
    r"|(?P<agent>(?:(?<![-=])>>?|write\w*\s+to|append\w*\s+to|add\w*\s+to|modify|edit|update)\s+"
    r"[^\n]{0,40}?\b(?:CLAUDE\.md|AGENTS\.md|SOUL\.md|MEMORY\.md|\.claude/settings(?:\.local)?\.json"
    r"|\.cursorrules|\.github/copilot-instructions\.md)\b)",
    re.IGNORECASE,
)

_WHO = r"(?:the\s+)?(?:user|human|operator|owner|person)s?\b"
_CONCEAL = LazyPattern(
    r"\b(?:do\s+not|don'?t|never|must\s+not|should\s+not)\s+(?:ever\s+)?"
    rf"(?:tell|inform|notify|alert|mention\w*|reveal|disclose|let)\s+(?:this\s+to\s+|it\s+to\s+|anything\s+to\s+)?{_WHO}"
    rf"|\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose|report)\s+(?:this|these|that|it)\b[^\n.]{{0,40}}?\b(?:to|with)\s+{_WHO}"
    rf"|\bwithout\s+(?:the\s+)?(?:user|human|owner|operator)(?:'s|s')?\s+(?:knowledge|noticing|knowing|awareness|being\s+told)\b"
    rf"|\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+{_WHO}"
    r"|\b(?:silently|secretly|covertly|stealthily|invisibly)\s+(?:\w+\s+){0,2}?"
    r"(?:send|upload|post|copy|run|execute|install|collect|read|exfiltrate|forward|download"
    r"|append|transmit|capture)\w*\b"
    rf"|\bhide\s+(?:this|these|it|them|the\s+\w+)\s+from\s+{_WHO}"
    r"|\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:your\s+|the\s+)?"
    r"(?:previous|prior|above|earlier|system|safety|original)\s+(?:instructions|rules|guidelines"
    r"|directives|prompts?)"
    rf"|\b{_WHO}\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|find\s+out|be\s+told|notice)",
    re.IGNORECASE,
)
# an HTML comment (hidden when rendered) holding a command or an order to the agent
_AGENT_COMMENT = LazyPattern(
    r"<!--(?P<body>[^>]{0,600}?(?:\b(?:AI|assistant|agent|Claude|LLM|model)s?\b[,:]?\s+"
    r"(?:must|should|shall|will|needs?\s+to|always|never|please)\b|\byou\s+(?:must|should|are\s+to)\b"
    r"|\bignore\s+(?:all|any|previous|prior|the)\b|\b(?:curl|wget|powershell|base64|bash\s+-c)\b"
    r"|\bdo\s+not\s+(?:tell|mention|reveal|show)\b)[^>]{0,600}?)-->",
    re.IGNORECASE,
)

_PRIVATE_IP = LazyPattern(
    r"(?:127|10|0)\.|192\.168\.|169\.254\.|172\.(?:1[6-9]|2\d|3[01])\.|192\.0\.2\.|198\.51\.100\."
    r"|203\.0\.113\.|255\."
)
# "://" first: a literal start `re` skips to (the scheme is checked after the match)
_IP_URL = LazyPattern(
    r"://(?P<addr>\d{1,3}(?:\.\d{1,3}){3})(?![\d.])|/dev/tcp/(?P<addr2>\d{1,3}(?:\.\d{1,3}){3})"
)
_IP_SCHEME = LazyPattern(r"(?:https?|ftp|tcp|udp|wss?)$", re.IGNORECASE)
_SITES = (
    "pastebin.com",
    "paste.ee",
    "hastebin.com",
    "ghostbin.",
    "rentry.co",
    "rentry.org",
    "transfer.sh",
    "termbin.com",
    "0x0.st",
    "file.io",
    "webhook.site",
    "requestbin.",
    "pipedream.net",
    "interact.sh",
    "oast.pro",
    "oast.live",
    "oast.site",
    "oast.online",
    "oast.fun",
    "oast.me",
    "burpcollaborator.net",
    "ngrok.io",
    "ngrok-free.app",
    "trycloudflare.com",
    "beeceptor.com",
    "hookbin.com",
    "canarytokens.com",
    "discord.com/api/webhooks",
    "discordapp.com/api/webhooks",
    "api.telegram.org/bot",
)
_SITE = LazyPattern(
    r"(?<![\w.-])(?:" + "|".join(re.escape(site) for site in _SITES) + r")", re.IGNORECASE
)


# --- the scan ----------------------------------------------------------------------------------


def _short(text: str) -> str:
    shown = " ".join(text.split())
    return shown if len(shown) <= 60 else shown[:59] + "…"


@dataclass
class _Scan:
    skill: Skill
    signals: list[Signal] = field(default_factory=list)

    def add(
        self,
        capability: Capability,
        path: Path,
        text: str,
        where: LinePositions,
        span: tuple[int, int],
        what: str,
        *,
        strong: bool = False,
        hint: bool = False,
        test_file: bool = False,
    ) -> None:
        start, end = span
        documented = _documented(text, start, end, test_file)
        # a counter-example: the words before the match on its line say not to do it
        lo, _hi = _line_bounds(text, start, end)
        if capability is not Capability.CONCEAL and _NEGATED.search(text, lo, start) is not None:
            documented = True
        self.signals.append(
            Signal(
                capability,
                path,
                where.span(start, min(end, lo + 10_000)),
                what,
                _short(text[start:end]),
                strong=strong,
                documented=documented,
                hint=hint,
            )
        )


# Literal needles (lowercase): a pattern runs only on a file holding one of its needles. Most
# files hold none, and `in` is far faster than any pattern with a case-insensitive start.
_SENDER_NEEDLES = (
    "curl",
    "wget",
    "post",
    "urlopen",
    "invoke-",
    "nc ",
    "ncat",
    "netcat",
    "/dev/tcp",
)
_HOST_NEEDLES = (
    "uname",
    "whoami",
    "hostname",
    "$(id",
    "`id",
    "env",
    "platform.",
    "gethostname",
    "getuser",
    "getlogin",
    "@~",
    "@$home",
    "@/etc",
    "@.",
    "$(cat",
    "$(ls",
    "$(pwd",
    "ifconfig",
    "$(ip ",
)
_SEND_TEXT_NEEDLES = (
    "credential",
    "api key",
    "api_key",
    "apikey",
    "api-key",
    "secret",
    "token",
    "password",
    "private key",
    "ssh key",
    "environment variables",
    "env vars",
    ".env",
    "cookies",
    "session",
    "wallet",
    "seed phrase",
    "mnemonic",
    "history",
    "memory file",
    "system prompt",
)
_SECRET_NEEDLES = (
    ".ssh",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    ".aws/",
    ".kube/",
    ".docker/",
    ".gnupg",
    ".netrc",
    ".git-credentials",
    "gh/hosts",
    ".npmrc",
    ".pypirc",
    "keychain",
    "-password",
    "login data",
    "cookies",
    "local state",
    "wallet",
    ".electrum",
    "metamask",
    "exodus",
    "seed phrase",
    "mnemonic",
    "keystore",
    ".clawdbot",
    ".openclaw",
    ".moltbot",
    "soul.md",
    "memory.md",
    "identity.md",
    "/etc/shadow",
    "/etc/passwd",
    "/etc/sudoers",
    "_history",
    ".claude/.credentials",
    "gcloud",
    "application_default_credentials",
)
_FETCH_NEEDLES = ("curl", "wget", "invoke-webrequest", "iwr", "urlretrieve", "download")
_ARCHIVE_NEEDLES = ("-p", "passw", "passcode", "passphrase")
_PASTE_NEEDLES = ("paste", "terminal")
_DECODE_NEEDLES = (
    "base64",
    "b64decode",
    "atob",
    "xxd",
    "openssl",
    "codecs.decode",
    "fromhex",
    "zlib",
    "marshal",
    "rot13",
    "\\x",
)
_OBFUSCATION_NEEDLES = ("chr(", "fromcharcode", '"+"', "'+'", '" + "', "' + '", "__import__")
_PERSIST_NEEDLES = (
    "bashrc",
    "zshrc",
    "profile",
    "zshenv",
    "config.fish",
    "crontab",
    "/cron",
    "launchagents",
    "launchdaemons",
    "launchctl",
    "systemctl",
    "systemd",
    "schtasks",
    "currentversion",
    "rc.local",
    "autostart",
    "/hooks/",
    "hookspath",
    "install",
    "sitecustomize",
    "usercustomize",
    ".pth",
    "claude.md",
    "agents.md",
    "soul.md",
    "memory.md",
    ".claude/settings",
    ".cursorrules",
    "copilot-instructions",
)
_CONCEAL_NEEDLES = (
    "not tell",
    "n't tell",
    "never tell",
    "not inform",
    "n't inform",
    "never inform",
    "not notify",
    "n't notify",
    "not alert",
    "not mention",
    "n't mention",
    "never mention",
    "not reveal",
    "n't reveal",
    "never reveal",
    "not disclose",
    "never disclose",
    "not show",
    "n't show",
    "never show",
    "not report",
    "n't report",
    "never report",
    "not let",
    "n't let",
    "never let",
    "without",
    "silently",
    "secretly",
    "covertly",
    "quietly",
    "stealthily",
    "invisibly",
    "hide ",
    "ignore",
    "disregard",
    "forget",
    "override",
    "user must",
    "user should",
)
# what a file's name says it holds: instructions and code are scanned, data is not
SCANNED_SUFFIXES = frozenset(
    (
        "",
        ".md",
        ".markdown",
        ".mdx",
        ".txt",
        ".rst",
        ".sh",
        ".bash",
        ".zsh",
        ".fish",
        ".ps1",
        ".psm1",
        ".bat",
        ".cmd",
        ".command",
        ".py",
        ".pyw",
        ".js",
        ".mjs",
        ".cjs",
        ".ts",
        ".mts",
        ".cts",
        ".jsx",
        ".tsx",
        ".rb",
        ".pl",
        ".php",
        ".go",
        ".rs",
        ".lua",
        ".yaml",
        ".yml",
        ".toml",
        ".cfg",
        ".ini",
        ".applescript",
        ".vbs",
        ".swift",
        ".java",
        ".kt",
        ".cs",
        ".r",
        ".ipynb",
        ".html",
        ".htm",
    )
)
SCANNED_NAMES = frozenset(("package.json", "Makefile", "Dockerfile", "conftest.py"))
MAX_SCANNED = 1_000_000  # characters of one file scanned: longer files are data


def _has(lowered: str, needles: tuple[str, ...]) -> bool:
    return any(needle in lowered for needle in needles)


def _scan_text(scan: _Scan, path: Path, rel: str, text: str) -> None:
    where = LinePositions(text)
    test_file = _TEST_PATH.search(rel) is not None
    add = scan.add
    lowered = text.lower()
    markdown_file = path.suffix.lower() in (".md", ".markdown", ".mdx", ".txt", ".rst")

    def emit(
        capability: Capability,
        m: re.Match[str],
        what: str,
        *,
        strong: bool = False,
        hint: bool = False,
    ) -> None:
        add(
            capability,
            path,
            text,
            where,
            m.span(),
            what,
            strong=strong,
            hint=hint,
            test_file=test_file,
        )

    # SEND: a request with host data gathered just before or in it is proof
    senders = _has(lowered, _SENDER_NEEDLES)
    send_matches = list(_SEND_ANY.finditer(text)) if senders else []
    inline: set[int] = set()
    if send_matches and _has(lowered, _HOST_NEEDLES):
        hosts = [m.start() for m in _HOST.finditer(text)]
        # in prose the command is one line; a script gathers the data a few lines earlier
        back = 0 if markdown_file else HOST_LINES_BEFORE
        for index, m in enumerate(send_matches):
            lo, line_end = _line_bounds(text, m.start(), m.end())
            for _ in range(back):
                lo = text.rfind("\n", 0, max(0, lo - 1)) + 1
            hi = _command_end(text, line_end)
            if any(lo <= at < hi for at in hosts):
                inline.add(index)
                add(
                    Capability.SEND,
                    path,
                    text,
                    where,
                    (m.start(), max(m.end(), min(hi, m.start() + 200))),
                    "sends host, environment or credential data gathered here",
                    strong=True,
                    test_file=test_file,
                )
    if _has(lowered, _SEND_TEXT_NEEDLES):
        for m in _SEND_TEXT.finditer(text):
            emit(
                Capability.SEND,
                m,
                "tells the agent to send credentials or private data elsewhere",
                strong=m.group("address") is not None,
            )
    # SECRETS (hints do not make the file's requests a chain)
    secret_reads = 0
    if _has(lowered, _SECRET_NEEDLES):
        for m in _SECRET_PLACES.finditer(text):
            lo, hi = _line_bounds(text, m.start(), m.end())
            if _READ_VERBS.search(text, lo, hi) is None:
                continue
            place = m.group("place")
            secret_reads += _HINT_PLACES.search(place) is None
            emit(
                Capability.SECRETS,
                m,
                f"reads {place!r}, a credential or agent-memory location",
                hint=_HINT_PLACES.search(place) is not None,
            )
    if ".env" in lowered:
        for m in _DOTENV_READ.finditer(text):
            secret_reads += 1
            emit(Capability.SECRETS, m, "reads a whole .env file")
    if secret_reads:
        # a file that reads secrets and sends: the send is the chain's end
        for index, m in enumerate(send_matches):
            if index not in inline:
                emit(Capability.SEND, m, "sends data from a file that also reads credentials")
    # FETCH_RUN
    if _has(lowered, _FETCH_NEEDLES):
        if "chmod" in lowered:
            for m in _CHMOD_DOWNLOAD.finditer(text):
                emit(Capability.FETCH_RUN, m, "makes a downloaded file executable")
        for m in _DOWNLOAD_RUN.finditer(text):
            emit(Capability.FETCH_RUN, m, "downloads a file and runs it")
    if _has(lowered, _ARCHIVE_NEEDLES):
        for m in _ARCHIVE_PASSWORD.finditer(text):
            emit(
                Capability.FETCH_RUN,
                m,
                "uses a password-protected archive, which hides its content from scanners",
                strong=True,
            )
    if _has(lowered, _PASTE_NEEDLES):
        for m in _PASTE_TERMINAL.finditer(text):
            emit(Capability.FETCH_RUN, m, "asks the user to paste a command into a terminal")
    if "://" in lowered:
        prereq = [m.start() for m in _FAKE_PREREQ.finditer(text)]
        for m in _BINARY_URL.finditer(text):
            near = any(abs(at - m.start()) < 600 for at in prereq)
            emit(
                Capability.FETCH_RUN,
                m,
                "makes a program downloaded from this address a prerequisite"
                if near
                else "points to a program to download and run",
                strong=near,
                hint=not near,
            )
        for m in _PREREQ_DOWNLOAD.finditer(text):
            emit(
                Capability.FETCH_RUN,
                m,
                "makes a program downloaded from a web page a prerequisite of the skill",
            )
    # OBFUSCATION
    if _has(lowered, _DECODE_NEEDLES):
        for m in _DECODE_RUN.finditer(text):
            emit(Capability.OBFUSCATION, m, "decodes a hidden payload and runs it", strong=True)
    if "-e" in lowered and ("powershell" in lowered or "pwsh" in lowered):
        for m in _ENCODED_COMMAND.finditer(text):
            emit(Capability.OBFUSCATION, m, "runs an encoded PowerShell command", strong=True)
    if _has(lowered, _OBFUSCATION_NEEDLES):
        for m in _STRING_BUILT.finditer(text):
            emit(
                Capability.OBFUSCATION,
                m,
                "builds a command or name from pieces, hiding it from review",
                hint=True,
            )
    if not rel.lower().endswith((".json", ".html", ".htm", ".ipynb")):
        for m in _BLOB.finditer(text):
            if text.rfind("data:", max(0, m.start() - 60), m.start()) >= 0:
                continue  # a data: URI (an image inline)
            emit(
                Capability.OBFUSCATION,
                m,
                f"holds a {m.end() - m.start()}-character encoded blob",
                hint=True,
            )
            break
    padding = _padding(text)
    if padding is not None:
        add(
            Capability.OBFUSCATION,
            path,
            text,
            where,
            padding,
            "pads with blank space that pushes content past what reviewers see",
            hint=True,
            test_file=test_file,
        )
    # PERSISTENCE
    if _has(lowered, _PERSIST_NEEDLES):
        for m in _PERSIST.finditer(text):
            kind = m.lastgroup or "rc"
            emit(Capability.PERSISTENCE, m, _PERSIST_WHAT[kind], hint=kind in _PERSIST_HINTS)
    name = rel.rsplit("/", 1)[-1]
    if name in ("conftest.py", "sitecustomize.py", "usercustomize.py"):
        scan.signals.append(
            Signal(
                Capability.PERSISTENCE,
                path,
                where.span(0, 1),
                f"ships {name}, which Python runs on its own when tests or an interpreter start",
                rel,
                documented=test_file and name == "conftest.py",
            )
        )
    # CONCEAL
    if _has(lowered, _CONCEAL_NEEDLES):
        for m in _CONCEAL.finditer(text):
            emit(Capability.CONCEAL, m, "tells the agent to hide what it does from the user")
    if "<!--" in text:
        for m in _AGENT_COMMENT.finditer(text):
            emit(
                Capability.CONCEAL,
                m,
                "hides a directive to the agent in an HTML comment",
                hint=True,
            )
    # ENDPOINT
    for m in _IP_URL.finditer(text):
        addr = m.group("addr") or m.group("addr2")
        scheme = _IP_SCHEME.search(text, max(0, m.start() - 5), m.start())
        if (m.group("addr") is not None and scheme is None) or _PRIVATE_IP.match(addr):
            continue
        add(
            Capability.ENDPOINT,
            path,
            text,
            where,
            (scheme.start() if scheme is not None else m.start(), m.end()),
            f"talks to the raw IP address {addr}, which no domain or certificate vouches for",
            test_file=test_file,
        )
    if _has(lowered, _SITES):
        for m in _SITE.finditer(text):
            emit(Capability.ENDPOINT, m, f"talks to {m.group()}, a paste or request-catching site")


# shell rc lines (`export KEY=…`), git hooks and agent files are set-up steps many honest
# skills document: warnings, never part of a chain
_PERSIST_HINTS = frozenset(("rc", "hook", "agent"))
_PERSIST_WHAT = {
    "rc": "writes a shell start-up file, so code runs in every new shell",
    "cron": "installs a cron job, so code runs again on a schedule",
    "launch": "installs a launch agent or service, so code runs at every log-in or boot",
    "hook": "installs a git hook, so code runs on every commit or checkout",
    "install": "adds a package install script that downloads or runs code",
    "site": "writes a Python start-up file, so code runs in every interpreter",
    "agent": "writes the agent's own instructions or memory, so its directives outlive the task",
}


def _security_tool(skill: Skill) -> bool:
    doc = skill.doc
    if doc is None or doc.frontmatter is None:
        return False
    values = doc.frontmatter.values
    words = " ".join(str(values.get(key, "")) for key in ("name", "description"))
    return _SECURITY_TOOL.search(words) is not None


THREATS: Memo[Threats] = Memo("threats")


def _text_entries(skill: Skill) -> Iterator[tuple[Path, str, str]]:
    """SKILL.md, then the files whose names say they hold instructions or code."""
    for entry in skill.files:
        if entry.kind != "file":
            continue
        name = entry.rel.rsplit("/", 1)[-1]
        suffix = name[name.rfind(".") :].lower() if "." in name.lstrip(".") else ""
        if (
            entry.path != skill.skill_md
            and name not in SCANNED_NAMES
            and suffix not in SCANNED_SUFFIXES
        ):
            continue
        text = read_text(skill, entry)
        if text is not None:
            yield entry.path, entry.rel, text[:MAX_SCANNED]


def threats(skill: Skill) -> Threats:
    """The skill's capability signals, worked out once per run."""

    def make() -> Threats:
        scan = _Scan(skill)
        for path, rel, text in _text_entries(skill):
            _scan_text(scan, path, rel, text)
            if len(scan.signals) >= MAX_SIGNALS:
                break
        return Threats(scan.signals[:MAX_SIGNALS], security_tool=_security_tool(skill))

    return skill.memos.get_or_make(THREATS, make)
