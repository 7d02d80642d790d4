"""The HTML report: one self-contained page (no network, works from ``file://`` and as a CI
artifact) with the runtime grid and its filters, each skill's token budgets as bars, the
collection's catalog against each runtime's listing cap, and the findings grouped by severity
and rule (security first), each rule with its documentation.

Everything a skill holds is untrusted. The page's fixed parts are written here with every
value escaped (``_e``); the data (skills, findings, rule docs) travels as one JSON block that
the page's own script parses and puts into the document with ``textContent`` only, never as
markup. A strict Content-Security-Policy allows only this module's own script and style (by
their hashes), so even a mistake in escaping could not run anything a skill wrote.

No templating library: the fixed part is a few hundred bytes of markup, and the part that
grows with the collection (rows, findings) is built in the browser page by page, which keeps
a report of 6,700 skills quick to write and to open.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import json
from collections.abc import Iterable

from skillcheck import __version__
from skillcheck.report import Chunks, ReportOptions, Sink, display, grid, rel
from skillcheck.report.text import summary
from skillcheck.rules import FAMILIES, all_rules
from skillcheck.source.skill import Outcome, Severity
from skillcheck.targets import LISTING_CAPS, TARGETS

MAX_EXCERPT = 240  # characters of a quoted source line around the finding


def _e(value: object) -> str:
    """Text as HTML (content and attribute values alike)."""
    return html.escape(display(str(value)), quote=True)


def _json(value: object) -> str:
    """JSON to embed in a ``<script type="application/json">``: ``<`` escaped, so no
    ``</script>`` or ``<!--`` inside a string can end or change the block."""
    return json.dumps(value, separators=(",", ":")).replace("<", "\\u003c")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@functools.cache
def _rules() -> dict[str, dict[str, object]]:
    return {
        r.code: {
            "slug": r.slug,
            "severity": str(r.severity),
            "summary": r.summary,
            "what": r.what,
            "why": r.why,
            "bad": r.bad,
            "good": r.good,
            "security": FAMILIES.get(r.family, r.family).startswith("SK7"),
            "quote": r.quote_source,
        }
        for r in all_rules()
    }


def _excerpt(source: str | None, column: int) -> str | None:
    if source is None:
        return None
    if len(source) <= MAX_EXCERPT:
        return source
    start = max(0, column - 1 - MAX_EXCERPT // 2)
    return ("…" if start else "") + source[start : start + MAX_EXCERPT] + "…"


def _pct(value: int, limit: int) -> str:
    return f"{value / limit:.0%}" if limit else ""


def write(result, options: ReportOptions, sink: Sink) -> None:
    chunks = Chunks(sink)
    out = chunks.add
    targets = list(result.targets)
    limits = result.limits
    counts = result.counts()
    csp = (
        "default-src 'none'; "
        f"script-src {_hash(SCRIPT)}; style-src {_hash(STYLE)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    out(
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(csp)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>skillcheck report: {len(result.skills)} skills</title>\n"
        f"<style>{STYLE}</style>\n</head>\n<body>\n"
        '<a class="skip" href="#runtimes">Skip to the runtime grid</a>\n'
        "<header>\n<h1>skillcheck report</h1>\n"
        f'<p id="summary">{_e(summary(result, options))}</p>\n'
        f'<p class="meta">skillcheck {_e(__version__)}; targets: {_e(", ".join(targets))};'
        f" tokens counted with {_e(result.tokenizer)}.</p>\n"
        '<ul class="totals">'
        f'<li class="sev-error">{counts[Severity.ERROR]:,} errors</li>'
        f'<li class="sev-warning">{counts[Severity.WARNING]:,} warnings</li>'
        f'<li class="sev-info">{counts[Severity.INFO]:,} info</li></ul>\n'
        '<nav aria-label="Sections"><a href="#runtimes">Runtimes and budgets</a>'
        ' <a href="#catalog">Catalog and listing caps</a> <a href="#findings">Findings</a></nav>\n'
        "</header>\n<main>\n"
        "<noscript><p>The grid and the findings are drawn by the page's own script: allow"
        " scripts for this file, or read the same data with --format json.</p></noscript>\n"
    )
    _runtimes(result, targets, out)
    _catalog(result, out)
    out(
        '<section id="findings" aria-labelledby="h-findings">\n'
        '<h2 id="h-findings">Findings</h2>\n'
        "<p>Grouped by severity and rule, security and hygiene first. Open a rule to see its"
        " findings and its documentation.</p>\n"
        '<div id="finding-groups"></div>\n</section>\n</main>\n'
    )
    # the data block: the page's script reads it; nothing in it is markup
    by_file = {s.skill_md: s for s in result.skills if s.has_doc and s.skill_md is not None}
    index = {skill.root: i for i, skill in enumerate(result.skills)}
    rules = _rules()
    used = {d.code for d in result.diagnostics}
    reasons = grid.outcome_rules(result)
    head = {
        "targets": targets,
        "limits": {
            "catalog": limits.catalog,
            "body": limits.body,
            "reference": limits.reference,
            "lines": limits.lines,
        },
        "rules": {code: rules[code] for code in sorted(used) if code in rules},
    }
    out('<script type="application/json" id="skillcheck-data">')
    out(_json(head)[:-1] + ',"skills":[')
    for i, skill in enumerate(result.skills):
        per = result.outcomes.get(skill.root, {})
        fig = skill.figures  # as the JSON report gives them
        why = {
            str(t): " ".join(reasons[skill.root, target])
            for t, target in enumerate(targets)
            if (skill.root, target) in reasons
        }
        row = [
            rel(skill.root, options.cwd),
            skill.name,
            "".join(str(int(per.get(t, Outcome.OK))) for t in targets),
            None if fig is None else fig.catalog,
            None if fig is None else fig.body,
            None if fig is None else fig.largest_reference,
            None if fig is None else fig.references,
            None if fig is None else fig.lines,
            why,
        ]
        out(("," if i else "") + _json(row))
    out('],"findings":[')
    for i, diag in enumerate(result.diagnostics):
        doc = rules.get(diag.code)
        source = None
        if doc is None or doc["quote"]:
            summary_ = by_file.get(diag.path)
            source = summary_.line(diag.path, diag.line) if summary_ is not None else None
        row = [
            diag.code,
            str(diag.severity),
            diag.message,
            rel(diag.path, options.cwd),
            diag.line,
            diag.column,
            index.get(diag.skill, -1) if diag.skill is not None else -1,
            _excerpt(source, diag.column),
            diag.help,
        ]
        out(("," if i else "") + _json(row))
    out("]}</script>\n")
    out(f"<script>{SCRIPT}</script>\n</body>\n</html>\n")
    chunks.flush()


def render(result, options: ReportOptions) -> str:
    parts: list[str] = []
    write(result, options, parts.append)
    return "".join(parts)


def _runtimes(result, targets: list[str], out) -> None:
    """The runtime totals (written here) and the grid's frame, which the script fills."""
    totals = {t: dict.fromkeys(Outcome, 0) for t in targets}
    for skill in result.skills:
        per = result.outcomes.get(skill.root, {})
        for t in targets:
            totals[t][per.get(t, Outcome.OK)] += 1
    out(
        '<section id="runtimes" aria-labelledby="h-runtimes">\n'
        '<h2 id="h-runtimes">Runtimes and budgets</h2>\n'
        '<div class="scroll"><table class="totals-table">'
        "<caption>How many skills each runtime loads</caption>\n"
        '<thead><tr><th scope="col">Outcome</th>'
        + "".join(
            f'<th scope="col" class="rt" title="{_e(TARGETS[t].title if t in TARGETS else t)}">'
            f"{_e(t)}</th>"
            for t in targets
        )
        + "</tr></thead><tbody>\n"
    )
    for o in Outcome:
        out(
            f'<tr><th scope="row">{_e(o)}</th>'
            + "".join(
                f'<td class="{f"o{int(o)}" if totals[t][o] else "zero"}" data-target="{_e(t)}"'
                f' data-outcome="{_e(o)}">{totals[t][o]:,}</td>'
                for t in targets
            )
            + "</tr>\n"
        )
    out(
        "</tbody></table></div>\n"
        f"<p>Marks: {_e(grid.LEGEND)}. Bars: tokens of each tier against its budget"
        " (catalog entry, body, largest reference file); red past the budget.</p>\n"
        '<form id="filters" class="filters" role="search" aria-label="Filter the skills">\n'
        '<label>Skill <input type="search" id="f-text" placeholder="name or path"></label>\n'
        '<label>Runtime <select id="f-target"><option value="-1">any</option>'
        + "".join(f'<option value="{i}">{_e(t)}</option>' for i, t in enumerate(targets))
        + "</select></label>\n"
        '<label>Outcome <select id="f-outcome"><option value="any">any</option>'
        '<option value="notok">not ok</option>'
        + "".join(f'<option value="{int(o)}">{_e(o)}</option>' for o in Outcome)
        + "</select></label>\n"
        '<label><input type="checkbox" id="f-over"> over a budget</label>\n'
        "</form>\n"
        '<p id="grid-status" role="status" aria-live="polite"></p>\n'
        '<div class="scroll"><table id="grid"><caption>Skills: load outcome per runtime and'
        " token budgets</caption>\n<thead><tr>"
        '<th scope="col">Skill</th>'
        + "".join(f'<th scope="col" class="rt">{_e(t)}</th>' for t in targets)
        + '<th scope="col">Catalog</th><th scope="col">Body</th>'
        '<th scope="col">Largest reference</th></tr></thead>\n'
        '<tbody id="grid-body"></tbody></table></div>\n'
        '<div class="pager"><button type="button" id="prev">Previous page</button>'
        ' <span id="page"></span> <button type="button" id="next">Next page</button></div>\n'
        "</section>\n"
    )


def _listing(result) -> tuple[int, list[int]]:
    """Characters of the listing: every skill's name + description, and each description."""
    total = 0
    each = []
    for skill in result.skills:
        description = skill.description or ""
        total += len(skill.name or skill.root.name) + len(description)
        each.append(len(description))
    return total, each


def _catalog(result, out) -> None:
    """The collection's catalog: tokens against the collection budget, characters against
    each runtime's listing cap (declared in targets.LISTING_CAPS)."""
    total_tokens = sum((s.figures.catalog or 0) for s in result.skills if s.figures is not None)
    limit = result.limits.collection
    chars, each = _listing(result)
    out(
        '<section id="catalog" aria-labelledby="h-catalog">\n'
        '<h2 id="h-catalog">Catalog and listing caps</h2>\n'
        f"<p>The catalog (every skill's name and description, in every prompt) costs"
        f" <strong>{total_tokens:,} tokens</strong> and about {chars:,} characters for"
        f" {len(result.skills):,} skills"
        + (
            f", against a collection budget of {limit:,} tokens ({_pct(total_tokens, limit)})."
            if limit
            else " (no collection budget set: budgets.collection-catalog-tokens)."
        )
        + "</p>\n"
        '<table id="caps"><caption>The listing against each runtime\'s cap</caption>\n'
        '<thead><tr><th scope="col">Runtime</th><th scope="col">Cap</th>'
        '<th scope="col">This collection</th><th scope="col">Share</th></tr></thead><tbody>\n'
    )
    for name, cap in LISTING_CAPS.items():
        rows: Iterable[tuple[str, int, int, str]] = []
        if cap.total is not None:
            rows = [("whole listing", chars, cap.total, f"{chars:,} characters")]
        elif cap.per_skill is not None:
            largest = max(each, default=0)
            over = sum(n > cap.per_skill for n in each)
            rows = [
                (
                    "per skill description",
                    largest,
                    cap.per_skill,
                    f"largest description {largest:,} characters; {over:,} over the cap",
                )
            ]
        for what, value, limit_, text in rows:
            state = "over" if value > limit_ else "within"
            out(
                f'<tr data-runtime="{_e(name)}"><th scope="row">{_e(name)}</th>'
                f'<td title="{_e(cap.note)}">{limit_:,} characters, {_e(what)}</td>'
                f"<td>{_e(text)}</td>"
                f'<td><span class="bar cap" role="img" data-value="{value}" data-limit="{limit_}"'
                f' aria-label="{value:,} of {limit_:,} characters, {_pct(value, limit_)},'
                f' {state} the cap"><span class="fill{" over" * (value > limit_)}"></span>'
                f"</span> {_pct(value, limit_)}{' OVER' * (value > limit_)}</td></tr>\n"
            )
    out(
        "</tbody></table>\n"
        "<p>Characters are counted on the names and descriptions as written; each runtime"
        " adds its own framing.</p>\n</section>\n"
    )


STYLE = """
:root{--fg:#1b1f24;--muted:#4a5560;--bg:#fff;--line:#c9d1d9;--ok:#0b6b2b;--deg:#7a4d00;
--bad:#a4161a;--bar:#2f6fb3;--over:#c21f26;--focus:#0b57d0}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);
background:var(--bg);margin:0 auto;max-width:1400px;padding:0 1rem 3rem}
h1{font-size:1.6rem;margin:1rem 0 .3rem}h2{font-size:1.25rem;margin:2rem 0 .5rem;
border-bottom:1px solid var(--line)}h3{font-size:1.05rem;margin:1.2rem 0 .4rem}
.meta,caption{color:var(--muted)}caption{text-align:left;padding:.3rem 0}
a{color:var(--focus)}:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.3rem}
nav a{margin-right:1rem}
.totals{list-style:none;padding:0;display:flex;gap:1.2rem;font-weight:600}
.sev-error{color:var(--bad)}.sev-warning{color:var(--deg)}.sev-info{color:var(--muted)}
table{border-collapse:collapse}th,td{border-bottom:1px solid var(--line);padding:.2rem .5rem;
text-align:left;vertical-align:top}thead th{position:sticky;top:0;background:#f3f5f7}
.scroll{overflow-x:auto}#grid th.skill{min-width:10rem;max-width:24rem;overflow-wrap:break-word}
#grid td{white-space:nowrap}.zero{color:var(--muted)}.totals-table td{text-align:right}
.rt{font-size:.8rem}td.o0{color:var(--ok)}td.o1{color:var(--deg);font-weight:600}
td.o2,td.o3{color:var(--bad);font-weight:700}
.filters{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;margin:.6rem 0}
input,select,button{font:inherit}button{padding:.2rem .7rem}
.bar{display:inline-block;width:5rem;height:.8rem;border:1px solid #6b7682;
background:#f3f5f7;vertical-align:middle;position:relative}
.fill{display:block;height:100%;background:var(--bar)}.fill.over{background:var(--over)}
.fig{font-variant-numeric:tabular-nums;font-size:.85rem;margin-left:.3rem}
.fig.over{color:var(--bad);font-weight:700}
details{border:1px solid var(--line);border-radius:4px;margin:.4rem 0;padding:.3rem .6rem}
summary{cursor:pointer;font-weight:600}
.doc{background:#f6f8fa;padding:.4rem .7rem;margin:.4rem 0}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;padding:.3rem .5rem;
margin:.2rem 0;font-size:.85rem}
ol.items{padding-left:1.5rem}ol.items li{margin:.5rem 0}.loc{font-family:monospace}
.help{color:var(--muted)}
"""

SCRIPT = r"""
"use strict";
(function () {
  var data = JSON.parse(document.getElementById("skillcheck-data").textContent);
  var T = data.targets, S = data.skills, F = data.findings, R = data.rules, L = data.limits;
  var NAMES = ["ok", "degraded", "rejected", "dropped"];
  var MARKS = ["ok", "deg", "REJ", "DROP"];
  var PAGE = 100, MORE = 25;
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function num(n) { return Number(n).toLocaleString("en-US"); }
  function pct(v, l) { return Math.round(100 * v / l) + "%"; }
  // a skill row: [path, name, outcomes, catalog, body, largest ref, refs, lines, reasons]
  var TIERS = [["catalog", 3, L.catalog], ["body", 4, L.body], ["reference", 5, L.reference]];
  function over(s) {
    return TIERS.some(function (t) { return t[2] !== null && s[t[1]] !== null && s[t[1]] > t[2]; });
  }
  function bar(tier, value, limit) {
    var td = el("td");
    if (value === null) { td.textContent = "-"; return td; }
    if (limit === null) { td.appendChild(el("span", "fig", num(value))); return td; }
    var isOver = value > limit;
    var b = el("span", "bar");
    b.setAttribute("role", "img");
    b.dataset.tier = tier; b.dataset.value = value; b.dataset.limit = limit;
    b.setAttribute("aria-label", tier + ": " + num(value) + " of " + num(limit) +
      " tokens, " + pct(value, limit) + (isOver ? ", over budget" : ""));
    var f = el("span", isOver ? "fill over" : "fill");
    f.style.width = Math.min(100, 100 * value / limit) + "%";
    b.appendChild(f);
    td.appendChild(b);
    td.appendChild(el("span", isOver ? "fig over" : "fig",
      num(value) + " / " + num(limit) + (isOver ? " OVER" : "")));
    return td;
  }
  var text = document.getElementById("f-text"), target = document.getElementById("f-target");
  var outcome = document.getElementById("f-outcome"), overOnly = document.getElementById("f-over");
  var body = document.getElementById("grid-body"), status = document.getElementById("grid-status");
  var pageLabel = document.getElementById("page");
  var prev = document.getElementById("prev"), next = document.getElementById("next");
  var page = 0, shown = [];
  function cellMatches(o) {
    var want = outcome.value;
    if (want === "any") return true;
    if (want === "notok") return o !== "0";
    return o === want;
  }
  function keep(s) {
    var q = text.value.trim().toLowerCase();
    if (q && s[0].toLowerCase().indexOf(q) < 0 && (s[1] || "").toLowerCase().indexOf(q) < 0)
      return false;
    if (overOnly.checked && !over(s)) return false;
    if (outcome.value === "any") return true;
    var t = Number(target.value);
    if (t >= 0) return cellMatches(s[2].charAt(t));
    for (var i = 0; i < s[2].length; i++) if (cellMatches(s[2].charAt(i))) return true;
    return false;
  }
  function row(s) {
    var tr = el("tr");
    var th = el("th", "skill", s[0]);
    th.setAttribute("scope", "row");
    if (s[1] && s[1] !== s[0].split("/").pop()) th.appendChild(el("div", "help", "name: " + s[1]));
    tr.appendChild(th);
    for (var t = 0; t < T.length; t++) {
      var o = Number(s[2].charAt(t));
      var td = el("td", "o" + o, MARKS[o]);
      td.dataset.target = T[t]; td.dataset.outcome = NAMES[o];
      var why = s[8][String(t)];
      td.title = T[t] + ": " + NAMES[o] + (why ? " (" + why + ")" : "");
      tr.appendChild(td);
    }
    TIERS.forEach(function (t) { tr.appendChild(bar(t[0], s[t[1]], t[2])); });
    return tr;
  }
  function draw() {
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    page = Math.min(Math.max(page, 0), pages - 1);
    var frag = document.createDocumentFragment();
    var end = Math.min(shown.length, (page + 1) * PAGE);
    for (var i = page * PAGE; i < end; i++) frag.appendChild(row(S[shown[i]]));
    body.replaceChildren(frag);
    status.textContent = shown.length ? "Showing skills " + num(page * PAGE + 1) + " to " +
      num(end) + " of " + num(shown.length) + " (" + num(S.length) + " in all)" :
      "No skill matches the filters (" + num(S.length) + " in all)";
    pageLabel.textContent = "Page " + (page + 1) + " of " + pages;
    prev.disabled = page === 0; next.disabled = page >= pages - 1;
  }
  function filter() {
    shown = [];
    for (var i = 0; i < S.length; i++) if (keep(S[i])) shown.push(i);
    page = 0; draw();
  }
  [text, target, outcome, overOnly].forEach(function (c) {
    c.addEventListener("input", filter);
    c.addEventListener("change", filter);
  });
  document.getElementById("filters").addEventListener("submit", function (e) {
    e.preventDefault();
  });
  prev.addEventListener("click", function () { page--; draw(); });
  next.addEventListener("click", function () { page++; draw(); });
  filter();

  // findings: security and hygiene first, then by severity; within a group, by rule
  var SEV = {error: 0, warning: 1, info: 2};
  var groups = {};
  for (var i = 0; i < F.length; i++) {
    var f = F[i], rule = R[f[0]] || {};
    var g = rule.security ? "security" : f[1];
    (groups[g] = groups[g] || {});
    (groups[g][f[0]] = groups[g][f[0]] || []).push(i);
  }
  var TITLES = [["security", "Security and hygiene"], ["error", "Errors"],
    ["warning", "Warnings"], ["info", "Info"]];
  var holder = document.getElementById("finding-groups");
  if (!F.length) holder.appendChild(el("p", null, "No findings."));
  function docs(code) {
    var r = R[code], d = el("div", "doc");
    if (!r) return d;
    d.appendChild(el("p", null, r.summary));
    [["What it does", r.what], ["Why", r.why], ["Example", r.bad], ["Use instead", r.good]]
      .forEach(function (p) {
        if (!p[1]) return;
        d.appendChild(el("h4", null, p[0]));
        d.appendChild(el(p[0].indexOf("Ex") === 0 || p[0].indexOf("Use") === 0 ? "pre" : "p",
          null, p[1].trim()));
      });
    return d;
  }
  function item(i) {
    var f = F[i], li = el("li");
    li.appendChild(el("div", "loc", f[3] + ":" + f[4] + ":" + f[5]));
    li.appendChild(el("div", "msg", f[2]));
    if (f[7] !== null) li.appendChild(el("pre", "excerpt", f[4] + " | " + f[7]));
    if (f[8]) li.appendChild(el("div", "help", "help: " + f[8]));
    return li;
  }
  TITLES.forEach(function (gt) {
    var byRule = groups[gt[0]];
    if (!byRule) return;
    var codes = Object.keys(byRule).sort(function (a, b) {
      var sa = SEV[(R[a] || {}).severity] || 0, sb = SEV[(R[b] || {}).severity] || 0;
      return gt[0] === "security" && sa !== sb ? sa - sb : (a < b ? -1 : a > b ? 1 : 0);
    });
    var total = codes.reduce(function (n, c) { return n + byRule[c].length; }, 0);
    var sec = el("section", "group");
    sec.dataset.group = gt[0];
    sec.appendChild(el("h3", null, gt[1] + " (" + num(total) + ")"));
    codes.forEach(function (code) {
      var list = byRule[code], r = R[code] || {};
      var det = el("details", "rule");
      det.dataset.code = code;
      var sum = el("summary", null, code + " " + (r.slug || "") + ": " + num(list.length) +
        " finding" + (list.length === 1 ? "" : "s") + (r.summary ? " — " + r.summary : ""));
      det.appendChild(sum);
      var filled = false;
      det.addEventListener("toggle", function () {
        if (filled || !det.open) return;
        filled = true;
        var about = el("details", "about");
        about.appendChild(el("summary", null, "About " + code));
        about.appendChild(docs(code));
        det.appendChild(about);
        var ol = el("ol", "items"), shownN = 0;
        var more = el("button", null, "");
        more.type = "button";
        function add() {
          var end = Math.min(list.length, shownN + MORE);
          for (; shownN < end; shownN++) ol.appendChild(item(list[shownN]));
          more.hidden = shownN >= list.length;
          more.textContent = "Show " + Math.min(MORE, list.length - shownN) + " more of " +
            num(list.length - shownN);
        }
        more.addEventListener("click", add);
        det.appendChild(ol); det.appendChild(more);
        add();
      });
      sec.appendChild(det);
    });
    holder.appendChild(sec);
  });
})();
"""
