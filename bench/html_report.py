"""What the HTML report costs over the JSON report, and how long a browser takes to open it.

Lints PATH once (in this process, with the result cache as configured), then renders the
same result as JSON and as HTML to a sink that keeps only the size, several times each, and
prints the median and min of each and their difference. With --browser, it writes the HTML
report to a file and opens it in Debian's headless Chromium through selenium (as
tests/test_report_html.py does), timing from the request until the grid is drawn.

    python bench/html_report.py /work/realworld-corpus --target all
    python bench/html_report.py /work/realworld-corpus --target all --browser --runs 5

Run it inside `unshare -n` (with `ip link set lo up`) so the browser can reach nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from skillcheck.engine.config import build_settings
from skillcheck.engine.lint import lint
from skillcheck.report import ReportOptions, write
from skillcheck.settings import load_config


def _render(fmt: str, result, options: ReportOptions) -> tuple[float, int]:
    size = 0

    def sink(chunk: str) -> None:
        nonlocal size
        size += len(chunk.encode("utf-8", "surrogateescape"))

    start = time.perf_counter()
    write(fmt, result, options, sink)
    return time.perf_counter() - start, size


def _browser_open(path: Path, runs: int) -> list[float]:
    from selenium import webdriver
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
    ):
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="html-report-profile-")
    options.add_argument(f"--user-data-dir={profile}")
    service = webdriver.ChromeService(executable_path=shutil.which("chromedriver"))
    browser = webdriver.Chrome(options=options, service=service)
    times = []
    try:
        for _ in range(runs):
            browser.get("about:blank")
            start = time.perf_counter()
            browser.get(path.as_uri())  # returns after the load event: the scripts have run
            WebDriverWait(browser, 300).until(
                lambda b: b.execute_script(
                    "return document.querySelectorAll('#grid-body tr').length > 0"
                )
            )
            times.append(time.perf_counter() - start)
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--target", default="all")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--browser", action="store_true")
    args = parser.parse_args()

    settings = build_settings(load_config(None, isolated=True), target=args.target)
    # the result cache as the command line uses it (SKILLCHECK_CACHE_DIR, else the default)
    from skillcheck.engine.cache import default_directory

    settings = dataclasses.replace(
        settings, figures=True, jobs=2, cache_dir=default_directory(Path.cwd())
    )
    start = time.perf_counter()
    result = lint([args.path], settings)
    print(
        f"lint: {len(result.skills):,} skills, {len(result.diagnostics):,} findings,"
        f" {time.perf_counter() - start:.1f} s"
    )
    options = ReportOptions(cwd=Path.cwd())
    figures: dict[str, list[float]] = {}
    sizes: dict[str, int] = {}
    for _ in range(args.runs):
        for fmt in ("json", "html"):
            seconds, sizes[fmt] = _render(fmt, result, options)
            figures.setdefault(fmt, []).append(seconds)
    for fmt, times in figures.items():
        print(
            f"render {fmt}: median {statistics.median(times):.2f} s, min {min(times):.2f} s,"
            f" {sizes[fmt] / 1e6:.1f} MB"
        )
    delta = statistics.median(figures["html"]) - statistics.median(figures["json"])
    print(f"html - json: {delta:+.2f} s (medians of {args.runs})")
    if args.browser:
        with tempfile.TemporaryDirectory() as tmp:
            page = Path(tmp) / "report.html"
            with page.open("w", encoding="utf-8", errors="surrogateescape") as f:
                write("html", result, options, f.write)
            times = _browser_open(page, args.runs)
        print(
            f"browser open until the grid is drawn: median {statistics.median(times):.2f} s,"
            f" min {min(times):.2f} s, max {max(times):.2f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
