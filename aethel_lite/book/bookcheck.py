"""Check the built book the way a reader meets it: every page opened in headless Chromium.

``python -m aethel_lite.book.bookcheck _build/html`` (what ``make check-book`` runs) serves the built
HTML on 127.0.0.1, opens every page in headless Chromium with the network switched off (only
127.0.0.1 resolves), saves a screenshot of each and reports, per page:

- ``load``: the page did not load (navigation error, no ``load`` event in time);
- ``resource``: a request failed or answered >= 400 (with the network off, also anything fetched from a CDN),
  or an ``<img>`` is broken;
- ``link``: an internal link points at a file not in the book, or at an anchor the target page lacks;
- ``console``: a JavaScript exception, ``console.error`` or a browser log entry of level ``error``;
- ``math``: an element of class ``math`` that MathJax did not typeset, or raw TeX (``\\(``, ``\\[``, ``$$``,
  ``\\begin{``, a ``$...$`` holding TeX) in the visible text outside code blocks;
- ``alt``: an image with no alt text, or with a file name in its place;
- ``output``: a notebook output (``.cell_output``) that shows a Python traceback or an ``Error`` word;
- ``layout``: the page is wider than the window;
- ``wide``, ``stderr``, ``first-result``: the reader's checks of :mod:`aethel_lite.book.readercheck`.

The browser is Debian's ``chromium`` (or ``--browser``/``$AETHEL_CHROMIUM``), driven by Playwright's sync API
(``executable_path``: Playwright never downloads a browser of its own); the site is served by the standard
library's ``http.server`` in a thread.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import html.parser
import http.server
import os
import re
import shutil
import sys
import threading
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import AethelError, ParameterError
from ..io import atomic_write
from .readercheck import READER_PROBE, reader_problems

__all__ = [
    "Problem",
    "PageReport",
    "BrowserNotFound",
    "find_chromium",
    "html_pages",
    "BrowserError",
    "serve",
    "check_links",
    "check_site",
    "main",
]

#: Added to Playwright's own flags (headless, no extensions, sync or background traffic): no network but 127.0.0.1.
CHROMIUM_ARGS = ("--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",)
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
WINDOW = (1280, 900)
MAX_SHOT_HEIGHT = 12000  # pixels; a longer page is cut there
PAGE_TIMEOUT = 60.0  # seconds for one page to load and typeset its math
#: Sphinx's generated pages that get no screenshot (they are still checked).
NO_SCREENSHOT = {"genindex.html", "search.html", "py-modindex.html"}

RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{|\$[^$\n]*(?:\\[A-Za-z]+|[\^_{])[^$\n]*\$")
ERROR_WORD = re.compile(r"Traceback \(most recent call last\)|\b[A-Z]?[A-Za-z]*Error\b")

# Runs in the page once it has loaded: waits for MathJax (when the page has it; at most ``ms``) and reports
# what the checks need. Text is taken from a clone with code, scripts and typeset math removed.
_PAGE_PROBE = r"""
async (ms) => {
  const mj = window.MathJax;
  let mathjax = "absent";
  if (mj && mj.startup && mj.startup.promise) {
    const late = new Promise((_, no) => setTimeout(() => no(`not ready within ${ms / 1000} s`), ms));
    try { await Promise.race([mj.startup.promise, late]); mathjax = "ready"; }
    catch (e) { mathjax = "failed: " + e; }
  } else if (mj) { mathjax = "configured but not loaded"; }
  await new Promise(r => setTimeout(r, 50));
  const math = Array.from(document.querySelectorAll(".math"));
  const untypeset = math.filter(el => !el.querySelector("mjx-container"))
                        .map(el => el.textContent.trim().slice(0, 80));
  const images = Array.from(document.images).map(img => ({
      src: img.currentSrc || img.src, complete: img.complete, width: img.naturalWidth,
      alt: img.getAttribute("alt")}));
  const links = Array.from(document.querySelectorAll("a[href]")).map(a => a.href);
  const body = document.body ? document.body.cloneNode(true) : document.createElement("body");
  body.querySelectorAll("pre, code, script, style, textarea, noscript, mjx-container, .highlight")
      .forEach(el => el.remove());
  const outputs = Array.from(document.querySelectorAll(".cell_output")).map(el => el.textContent);
  const root = document.documentElement;
  return {mathjax, n_math: math.length, untypeset, images, links, text: body.textContent, outputs,
          title: document.title, page_width: root.scrollWidth, window_width: root.clientWidth};
}
"""


class BrowserNotFound(AethelError):
    """No Chromium executable was found (the message says how to install one)."""


class BrowserError(AethelError):
    """The browser could not be started, or failed while checking a page (not a problem of the page)."""


@dataclass(frozen=True)
class Problem:
    """One thing a reader would see broken: ``page`` (path in the site), ``kind`` and ``detail``."""

    page: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.page}: {self.kind}: {self.detail}"


@dataclass
class PageReport:
    """What was seen on one page: its problems, math elements (and how many MathJax left as TeX), screenshot."""

    page: str
    problems: list[Problem]
    n_math: int = 0
    n_untypeset: int = 0
    mathjax: str = "absent"
    screenshot: Path | None = None


# -- the site ---------------------------------------------------------------------------------------
def html_pages(site: str | os.PathLike) -> list[str]:
    """Every ``.html`` file of the built site, relative, sorted; folders starting with ``_`` skipped
    (:class:`ParameterError` when ``site`` holds no ``index.html``)."""
    root = Path(site)
    if not (root / "index.html").is_file():
        raise ParameterError(f"{root}: no index.html here; build the book first (make book)")
    rels = [path.relative_to(root) for path in root.rglob("*.html")]
    pages = [
        rel.as_posix() for rel in rels if not any(part.startswith(("_", ".")) for part in rel.parts[:-1])
    ]
    return sorted(pages, key=lambda p: (p != "index.html", p))


class _Anchors(html.parser.HTMLParser):
    """The anchors of an HTML file: every ``id`` and ``<a name>``."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.feed(path.read_text(encoding="utf-8", errors="replace"))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids.update(v for k, v in attrs if v and (k == "id" or (k == "name" and tag == "a")))


def check_links(
    site: Path, page: str, links: Sequence[str], base: str, anchor_cache: dict[Path, set[str]] | None = None
) -> list[Problem]:
    """Problems with the internal links of ``page``: missing file, or missing ``#anchor`` in an HTML target
    (``links`` are absolute URLs; those not under ``base``, ``http://127.0.0.1:PORT/``, are not checked)."""
    cache = anchor_cache if anchor_cache is not None else {}
    problems: list[Problem] = []
    for url in (u for u in dict.fromkeys(links) if u.startswith(base)):  # each once, in order
        parts = urllib.parse.urlsplit(url)
        target = site / urllib.parse.unquote(parts.path).lstrip("/")
        if parts.path.endswith("/") or target.is_dir():
            target = target / "index.html"
        where, fragment = target.relative_to(site).as_posix(), urllib.parse.unquote(parts.fragment)
        shown = url[len(base) - 1 :]
        if not target.is_file():
            problems.append(Problem(page, "link", f"{shown} -> no such file {where}"))
        elif fragment and target.suffix == ".html":
            if target not in cache:
                cache[target] = _Anchors(target).ids
            if fragment not in cache[target]:
                problems.append(Problem(page, "link", f"{shown} -> {where} has no anchor #{fragment}"))
    return problems


def text_problems(page: str, probe: dict[str, Any]) -> list[Problem]:
    """Math left as raw TeX, notebook outputs showing an error, and a page wider than the window
    (a wide table or line that pushes part of the page out of view), from the page probe's result."""

    def around(text: str, match: re.Match, before: int, after: int) -> str:
        return " ".join(text[max(0, match.start() - before) : match.end() + after].split())

    problems, width, window = [], probe.get("page_width", 0), probe.get("window_width", 0)
    if width > window + 1:
        why = "something does not scroll in its own box"
        problems.append(
            Problem(page, "layout", f"the page is {width} px wide in a {window} px window ({why})")
        )
    if untypeset := probe["untypeset"]:
        said = f"{len(untypeset)} of {probe['n_math']} formulas not typeset (MathJax {probe['mathjax']})"
        problems.append(Problem(page, "math", f"{said}, e.g. {untypeset[0]!r}"))
    if match := RAW_TEX.search(probe["text"]):
        problems.append(
            Problem(page, "math", f"raw TeX in the text: ...{around(probe['text'], match, 30, 30)}...")
        )
    for i, output in enumerate(probe["outputs"]):
        if match := ERROR_WORD.search(output):
            said = f"notebook output {i} shows {match.group(0)!r}"
            problems.append(Problem(page, "output", f"{said}: ...{around(output, match, 40, 60)}..."))
    return problems


# -- the server and the browser -----------------------------------------------------------------------
class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # no line per request on stderr
        pass


@contextlib.contextmanager
def serve(site: str | os.PathLike):
    """Serve ``site`` on 127.0.0.1 (free port) from a thread, as a context manager that gives the base URL
    ``http://127.0.0.1:PORT/``."""
    handler = functools.partial(_QuietHandler, directory=str(Path(site)))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/"
        finally:
            server.shutdown()


def find_chromium(explicit: str | None = None) -> str:
    """Path of a Chromium/Chrome executable: ``explicit``, ``$AETHEL_CHROMIUM``, else the first on PATH
    (:class:`BrowserNotFound` naming what was tried and how to install it)."""
    for name in (explicit, os.environ.get("AETHEL_CHROMIUM")):
        if name:
            if (path := shutil.which(name)) is None:
                raise BrowserNotFound(f"browser {name!r} not found or not executable")
            return path
    if found := next((path for path in map(shutil.which, CANDIDATES) if path), None):
        return found
    raise BrowserNotFound(
        f"no Chromium found on PATH (tried {', '.join(CANDIDATES)}); install it with "
        "`apt-get install -y chromium` (Debian) or set AETHEL_CHROMIUM to the executable"
    )


_REFRESH = re.compile(
    r"""<meta[^>]+http-equiv=["']?refresh["']?[^>]*content=["']?\d+\s*;\s*url=([^"'>]+)""", re.I
)


def _redirect_target(path: Path) -> str | None:
    """The URL of a ``<meta http-equiv="refresh">`` page (Jupyter Book's root ``index.html``), else None."""
    match = _REFRESH.search(path.read_text(encoding="utf-8", errors="replace")[:4096])
    return match.group(1).strip() if match else None


_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".svg", ".gif", ".webp")


def alt_problems(page: str, images: Sequence[dict[str, Any]]) -> list[Problem]:
    """Images whose alt text is missing, empty or a file name (``../_images/3f2a.png``)."""
    alts = [(img["src"], (img.get("alt") or "").strip()) for img in images]
    return [
        Problem(page, "alt", f"image {src} has no alt text" + (f" (it says {alt!r})" if alt else ""))
        for src, alt in alts
        if not alt or alt.lower().endswith(_IMAGE_SUFFIXES) or "_images/" in alt
    ]


class _Reader:
    """The built site served on 127.0.0.1 and one tab of headless Chromium reading it at the reader's window size
    (Playwright driving ``executable``); a context manager. :meth:`read` checks one page."""

    def __init__(self, site: Path, executable: str, timeout: float, screenshots: Path | None) -> None:
        self.site, self.executable, self.timeout, self.shots = site, executable, timeout, screenshots
        # (kind, detail) of the page being read, from the browser's events
        self.seen: list[tuple[str, str]] = []
        self.anchors: dict[Path, set[str]] = {}
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> _Reader:
        from playwright.sync_api import sync_playwright

        with self._stack as stack:
            self.base = stack.enter_context(serve(self.site))
            browser = stack.enter_context(sync_playwright()).chromium.launch(
                executable_path=self.executable, args=CHROMIUM_ARGS, timeout=self.timeout * 1000
            )
            stack.callback(browser.close)
            self.page = browser.new_page(viewport={"width": WINDOW[0], "height": WINDOW[1]})
            self.page.set_default_timeout(self.timeout * 1000)
            for event in ("response", "requestfailed", "console", "pageerror"):
                self.page.on(event, getattr(self, "_on_" + event))
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _on_response(self, r: Any) -> None:  # the browser asks for /favicon.ico on its own: no reader sees it
        if r.status >= 400 and not (r.status == 404 and urllib.parse.urlsplit(r.url).path == "/favicon.ico"):
            self.seen.append(("resource", f"{r.url} answered HTTP {r.status}"))

    def _on_requestfailed(self, request: Any) -> None:
        if request.failure != "net::ERR_ABORTED":  # cancelled, e.g. by leaving the page
            self.seen.append(("resource", f"{request.url} failed: {request.failure}"))

    def _on_console(self, msg: Any) -> None:
        # "Failed to load resource" is a request already reported, with its URL
        if msg.type in ("error", "assert") and not msg.text.startswith("Failed to load resource"):
            self.seen.append(("console", f"console.{msg.type}: {msg.text[:200]}"))

    def _on_pageerror(self, err: Any) -> None:
        text = f"{err.name}: {err.message}" if err.name else err.message
        self.seen.append(("console", f"JavaScript exception: {(text.splitlines() or ['?'])[0]}"))

    def read(self, rel: str) -> PageReport:
        """Open ``rel`` (a path in the site) and collect its problems (and screenshot)."""
        from playwright.sync_api import Error as PlaywrightError

        site, base, page = self.site, self.base, self.page
        if (redirect := _redirect_target(site / rel)) is not None:  # the root index.html only sends one on
            links = [urllib.parse.urljoin(base + urllib.parse.quote(rel), redirect)]
            return PageReport(rel, check_links(site, rel, links, base, self.anchors))
        self.seen.clear()
        url = base + urllib.parse.quote(rel)
        try:
            page.goto(url, wait_until="load")
        except PlaywrightError as exc:
            return PageReport(rel, [Problem(rel, "load", f"{url}: {str(exc).splitlines()[0]}")])
        probe, reading = page.evaluate(_PAGE_PROBE, self.timeout * 1000), page.evaluate(READER_PROBE)
        problems = [Problem(rel, kind, detail) for kind, detail in dict.fromkeys(self.seen)]  # each once
        images = probe["images"]
        problems += [
            Problem(rel, "resource", f"broken image {i['src']}")
            for i in images
            if i["complete"] and not i["width"]
        ]
        problems += alt_problems(rel, images) + check_links(site, rel, probe["links"], base, self.anchors)
        problems += text_problems(rel, probe) + [Problem(rel, *found) for found in reader_problems(reading)]
        report = PageReport(rel, problems, probe["n_math"], len(probe["untypeset"]), probe["mathjax"])
        if self.shots is not None and Path(rel).name not in NO_SCREENSHOT:
            report.screenshot = self.shots / (rel.removesuffix(".html").replace("/", "__") + ".png")
            with atomic_write(report.screenshot, "wb") as fh:
                fh.write(self._screenshot())
        return report

    def _screenshot(self) -> bytes:
        """The whole page (up to :data:`MAX_SHOT_HEIGHT`) in a window as wide as the reader's: a full-page shot
        would lay the page out as wide as its widest element, and the theme then centres the text off the shot."""
        height = self.page.evaluate("document.documentElement.scrollHeight")
        height = int(min(max(height, WINDOW[1]), MAX_SHOT_HEIGHT))
        self.page.set_viewport_size({"width": WINDOW[0], "height": height})
        try:
            return self.page.screenshot(clip={"x": 0, "y": 0, "width": WINDOW[0], "height": height})
        finally:
            self.page.set_viewport_size({"width": WINDOW[0], "height": WINDOW[1]})


def check_site(
    site: str | os.PathLike,
    *,
    screenshots: str | os.PathLike | None = None,
    pages: Sequence[str] | None = None,
    executable: str | None = None,
    timeout: float = PAGE_TIMEOUT,
    progress: bool = True,
) -> list[PageReport]:
    """Open every page of the built ``site`` (``_build/html``, holding ``index.html``) in headless Chromium;
    one :class:`PageReport` per page. ``screenshots``: a folder for one PNG per page (created), ``pages``: paths
    in ``site`` (default :func:`html_pages`), ``executable``: the browser (default :func:`find_chromium`),
    ``timeout``: seconds for one page to load and typeset its math, ``progress``: a tqdm progress bar."""
    from tqdm.auto import tqdm

    todo = list(pages) if pages is not None else html_pages(site)
    shots = Path(screenshots) if screenshots is not None else None
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
    executable = find_chromium(executable)
    try:
        from playwright.sync_api import Error as PlaywrightError
    except ImportError as exc:
        raise BrowserError("Playwright is not installed: run `make setup` (the dev dependencies)") from exc
    try:
        with _Reader(Path(site), executable, timeout, shots) as reader:
            return [reader.read(rel) for rel in tqdm(todo, desc="pages", unit="page", disable=not progress)]
    except PlaywrightError as exc:
        raise BrowserError(f"the browser failed: {' '.join(str(exc).split())[:500]}") from exc


# -- command line -----------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m aethel_lite.book.bookcheck",
        description=(
            "Open every page of the built book in headless Chromium (network off) and report broken "
            "pages, images, links, JavaScript errors, raw TeX and notebook errors."
        ),
    )
    p.add_argument("site", nargs="?", default="_build/html", help="the built HTML (default %(default)s)")
    p.add_argument("--screenshots", default="_build/screenshots", help="PNGs go here (default %(default)s)")
    p.add_argument("--no-screenshots", action="store_true", help="take no screenshots")
    p.add_argument("--page", action="append", metavar="PATH", help="check only this page (repeatable)")
    p.add_argument("--browser", help="Chromium executable (default: $AETHEL_CHROMIUM or chromium on PATH)")
    p.add_argument("--timeout", type=float, default=PAGE_TIMEOUT, help="seconds a page (default %(default)s)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; 0 no problem, 1 problems found, 2 the check could not run."""
    args = build_parser().parse_args(argv)
    t0 = time.monotonic()
    try:
        if args.page:
            html_pages(args.site)  # the site must exist
            for page in args.page:
                if not (Path(args.site) / page).is_file():
                    raise ParameterError(f"--page {page}: no such file in {args.site}")
        reports = check_site(
            args.site,
            screenshots=None if args.no_screenshots else args.screenshots,
            pages=args.page,
            executable=args.browser,
            timeout=args.timeout,
            progress=not args.no_progress,
        )
    except AethelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    problems = [p for r in reports for p in r.problems]
    for problem in problems:
        print(problem)
    n_math = sum(r.n_math - r.n_untypeset for r in reports)
    shots = sum(r.screenshot is not None for r in reports)
    print(
        f"checked {len(reports)} pages ({n_math} formulas typeset, {shots} screenshots) in "
        f"{time.monotonic() - t0:.1f} s: {len(problems)} problem(s)"
    )
    return 1 if problems else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
