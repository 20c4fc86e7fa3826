"""Check the built book the way a reader meets it: every page opened in headless Chromium.

``python -m aethel_lite.book.bookcheck _build/html`` (what ``make check-book`` runs) serves the built
HTML on 127.0.0.1, opens every page in headless Chromium with the network switched off (only
127.0.0.1 resolves), saves a screenshot of each and reports, per page:

``load``
    the page did not load (navigation error, HTTP status >= 400, no ``load`` event in time);
``resource``
    a request failed or answered >= 400 (with the network off, also anything fetched from a CDN),
    or an ``<img>`` is broken;
``link``
    an internal link points at a file not in the book, or at an anchor the target page lacks;
``console``
    a JavaScript exception, ``console.error`` or a browser log entry of level ``error``;
``math``
    an element of class ``math`` that MathJax did not typeset, or raw TeX (``\\(``, ``\\[``,
    ``$$``, ``\\begin{``, a ``$...$`` holding TeX) in the visible text outside code blocks;
``alt``
    an image with no alt text, or with a file name in its place;
``output``
    a notebook output (``.cell_output``) that shows a Python traceback or an ``Error`` word;
``wide``, ``stderr``, ``first-result``
    the reader's checks of :mod:`aethel_lite.book.readercheck`.

Chromium is driven over the DevTools Protocol on a pipe: only Debian's ``chromium`` and the standard library.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import html.parser
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
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
    "serve",
    "Chromium",
    "check_site",
    "main",
]

#: Flags every browser run gets (plus an isolated profile): headless, no GPU, no extensions or background traffic,
#: and no network but 127.0.0.1.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-extensions",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--mute-audio",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    "--remote-debugging-pipe",
)
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
WINDOW = (1280, 900)
MAX_SHOT_HEIGHT = 12000  # pixels; a longer page is cut there
PAGE_TIMEOUT = 60.0  # seconds for one page to load and typeset its math
#: Sphinx's generated pages that get no screenshot (they are still checked).
NO_SCREENSHOT = {"genindex.html", "search.html", "py-modindex.html"}

RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{|\$[^$\n]*(?:\\[A-Za-z]+|[\^_{])[^$\n]*\$")
ERROR_WORD = re.compile(r"Traceback \(most recent call last\)|\b[A-Z]?[A-Za-z]*Error\b")

# Runs in the page once it has loaded: waits for MathJax (when the page has it) and reports what
# the checks need. Text is taken from a clone with code, scripts and typeset math removed.
_PAGE_PROBE = r"""
(async () => {
  const mj = window.MathJax;
  let mathjax = "absent";
  if (mj && mj.startup && mj.startup.promise) {
    try { await mj.startup.promise; mathjax = "ready"; } catch (e) { mathjax = "failed: " + e; }
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
})()
"""


class BrowserNotFound(AethelError):
    """No Chromium executable was found (the message says how to install one)."""


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
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and (name == "id" or (name == "name" and tag == "a")):
                self.ids.add(value)


def _anchors(path: Path, cache: dict[Path, set[str]]) -> set[str]:
    if path not in cache:
        parser = _Anchors()
        parser.feed(path.read_text(encoding="utf-8", errors="replace"))
        cache[path] = parser.ids
    return cache[path]


def check_links(
    site: Path, page: str, links: Sequence[str], base: str, anchor_cache: dict[Path, set[str]] | None = None
) -> list[Problem]:
    """Problems with the internal links of ``page``: missing file, or missing ``#anchor`` in an HTML target
    (``links`` are absolute URLs; those not under ``base``, ``http://127.0.0.1:PORT/``, are not checked)."""
    cache = anchor_cache if anchor_cache is not None else {}
    problems: list[Problem] = []
    for url in dict.fromkeys(links):  # each once, in order
        if not url.startswith(base):
            continue
        parts = urllib.parse.urlsplit(url)
        rel = urllib.parse.unquote(parts.path).lstrip("/")
        target = site / rel
        if rel == "" or parts.path.endswith("/") or target.is_dir():
            target = target / "index.html"
        shown = url[len(base) - 1 :]
        if not target.is_file():
            problems.append(
                Problem(page, "link", f"{shown} -> no such file {target.relative_to(site).as_posix()}")
            )
            continue
        fragment = urllib.parse.unquote(parts.fragment)
        if fragment and target.suffix == ".html" and fragment not in _anchors(target, cache):
            problems.append(
                Problem(
                    page,
                    "link",
                    f"{shown} -> {target.relative_to(site).as_posix()} has no anchor #{fragment}",
                )
            )
    return problems


def text_problems(page: str, probe: dict[str, Any]) -> list[Problem]:
    """Math left as raw TeX, notebook outputs showing an error, and a page wider than the window
    (a wide table or line that pushes part of the page out of view), from the page probe's result."""
    problems = []
    if probe.get("page_width", 0) > probe.get("window_width", 0) + 1:
        problems.append(
            Problem(
                page,
                "layout",
                f"the page is {probe['page_width']} px wide in a "
                f"{probe['window_width']} px window (something does not scroll in its own box)",
            )
        )
    if probe["untypeset"]:
        problems.append(
            Problem(
                page,
                "math",
                f"{len(probe['untypeset'])} of {probe['n_math']} formulas not typeset "
                f"(MathJax {probe['mathjax']}), e.g. {probe['untypeset'][0]!r}",
            )
        )
    match = RAW_TEX.search(probe["text"])
    if match:
        context = " ".join(probe["text"][max(0, match.start() - 30) : match.end() + 30].split())
        problems.append(Problem(page, "math", f"raw TeX in the text: ...{context}..."))
    for i, output in enumerate(probe["outputs"]):
        match = ERROR_WORD.search(output)
        if match:
            context = " ".join(output[max(0, match.start() - 40) : match.end() + 60].split())
            problems.append(
                Problem(page, "output", f"notebook output {i} shows {match.group(0)!r}: ...{context}...")
            )
    return problems


# -- the server -------------------------------------------------------------------------------------
@contextlib.contextmanager
def serve(site: str | os.PathLike, timeout: float = 15.0):
    """Serve ``site`` on 127.0.0.1 (free port) with ``python -m http.server`` in a subprocess, as a
    context manager that gives the base URL ``http://127.0.0.1:PORT/``."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-u",
            "-m",
            "http.server",
            "0",
            "--bind",
            "127.0.0.1",
            "--directory",
            str(Path(site)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        line = proc.stdout.readline() if ready else ""
        match = re.search(r"port (\d+)", line)
        if not match:
            raise AethelError(f"http.server did not start for {Path(site)} (said {line!r})")
        yield f"http://127.0.0.1:{match.group(1)}/"
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# -- the browser -------------------------------------------------------------------------------------
def find_chromium(explicit: str | None = None) -> str:
    """Path of a Chromium/Chrome executable: ``explicit``, ``$AETHEL_CHROMIUM``, else the first on PATH
    (:class:`BrowserNotFound` naming what was tried and how to install it)."""
    for name in (explicit, os.environ.get("AETHEL_CHROMIUM")):
        if name:
            path = shutil.which(name)
            if path is None:
                raise BrowserNotFound(f"browser {name!r} not found or not executable")
            return path
    found = next((path for path in map(shutil.which, CANDIDATES) if path), None)
    if found:
        return found
    raise BrowserNotFound(
        f"no Chromium found on PATH (tried {', '.join(CANDIDATES)}); install it with "
        "`apt-get install -y chromium` (Debian) or set AETHEL_CHROMIUM to the executable"
    )


class CDPError(AethelError):
    """The browser answered a DevTools command with an error, or did not answer in time."""


class Chromium:
    """Headless Chromium driven over the DevTools protocol on a pipe (JSON messages ended by a NUL byte); a context
    manager. Events arrive in :attr:`events` as ``(session, method, params)`` tuples."""

    def __init__(self, executable: str | None = None, *, window: tuple[int, int] = WINDOW):
        self.executable = find_chromium(executable)
        self.window = window
        self.events: list[tuple[str | None, str, dict]] = []
        self._answers: dict[int, dict] = {}
        self._next_id = 0
        self._lock = threading.Condition()
        self._profile: tempfile.TemporaryDirectory | None = None
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> Chromium:
        self._profile = tempfile.TemporaryDirectory(prefix="aethel-chromium-")
        cmd_read, self._cmd_write = os.pipe()  # we write commands; the browser reads fd 3
        self._evt_read, evt_write = os.pipe()  # the browser writes fd 4; we read

        def child_fds() -> None:  # runs in the child before exec: put the pipe ends on 3 and 4
            # via copies above 9, so that neither end is overwritten (an end may already be 3 or 4)
            # and both lose close-on-exec (dup2 onto itself would keep it)
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (cmd_read, evt_write)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)
            for fd in high:
                os.close(fd)

        args = [
            self.executable,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={self._profile.name}",
            f"--window-size={self.window[0]},{self.window[1]}",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,
            preexec_fn=child_fds,
        )
        os.close(cmd_read)
        os.close(evt_write)
        threading.Thread(target=self._reader, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(CDPError, OSError):
            self.call("Browser.close", timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        with contextlib.suppress(OSError):
            os.close(self._cmd_write)
        self._profile.cleanup()

    def _reader(self) -> None:
        buf = b""
        with os.fdopen(self._evt_read, "rb", buffering=0) as fh:
            for chunk in iter(lambda: fh.read(1 << 16), b""):
                buf += chunk
                *messages, buf = buf.split(b"\0")
                for raw in messages:
                    msg = json.loads(raw)
                    with self._lock:
                        if "id" in msg:
                            self._answers[msg["id"]] = msg
                        else:
                            self.events.append((msg.get("sessionId"), msg["method"], msg.get("params", {})))
                        self._lock.notify_all()
        with self._lock:
            self._closed_pipe = True
            self._lock.notify_all()

    def call(
        self,
        method: str,
        params: dict | None = None,
        *,
        session: str | None = None,
        timeout: float = PAGE_TIMEOUT,
    ) -> dict:
        """Send one DevTools command and wait for its answer (raises :class:`CDPError`)."""
        with self._lock:
            self._next_id += 1
            msg_id = self._next_id
        msg: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd_write, json.dumps(msg).encode() + b"\0")
        with self._lock:
            self._lock.wait_for(
                lambda: msg_id in self._answers or getattr(self, "_closed_pipe", False), timeout
            )
            if msg_id not in self._answers:
                raise CDPError(f"{method}: no answer from the browser within {timeout:.0f} s")
            answer = self._answers.pop(msg_id)
        if "error" in answer:
            raise CDPError(f"{method}: {answer['error'].get('message')}")
        return answer.get("result", {})

    def wait_event(self, method: str, session: str | None, since: int, timeout: float) -> dict | None:
        """Wait for event ``method`` (of ``session``) at index >= ``since`` in :attr:`events`; None if none came."""

        def found() -> dict | None:
            return next((p for s, m, p in self.events[since:] if m == method and s == session), None)

        with self._lock:
            self._lock.wait_for(lambda: found() is not None or getattr(self, "_closed_pipe", False), timeout)
            return found()

    def new_page(self) -> str:
        """Open a tab, attach to it and enable the domains the check listens to; returns the session id."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=session)
        self.call("Network.setCacheDisabled", {"cacheDisabled": False}, session=session)
        return session


def _console_problems(
    page: str, events: Sequence[tuple[str | None, str, dict]], session: str
) -> list[Problem]:
    problems = []
    requests: dict[str, str] = {}
    for s, method, params in events:
        if s != session:
            continue
        if method == "Network.requestWillBeSent":
            requests[params["requestId"]] = params["request"]["url"]
        elif method == "Network.responseReceived":
            status = params["response"]["status"]
            if status == 404 and urllib.parse.urlsplit(params["response"]["url"]).path == "/favicon.ico":
                continue  # the browser asks for it on its own; a reader sees no difference
            if status >= 400:
                problems.append(
                    Problem(page, "resource", f"{params['response']['url']} answered HTTP {status}")
                )
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            url = requests.get(params["requestId"], "?")
            problems.append(Problem(page, "resource", f"{url} failed: {params.get('errorText')}"))
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = (details.get("exception") or {}).get("description") or details.get("text", "")
            problems.append(
                Problem(page, "console", f"JavaScript exception: {text.splitlines()[0] if text else '?'}")
            )
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            problems.append(Problem(page, "console", f"console.{params['type']}: {args[:200]}"))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            if entry.get("source") == "network":  # already reported, with its URL, as a resource problem
                continue
            problems.append(Problem(page, "console", f"{entry.get('source')}: {entry.get('text', '')[:200]}"))
    return problems


_REFRESH = re.compile(
    r"""<meta[^>]+http-equiv=["']?refresh["']?[^>]*content=["']?\d+\s*;\s*url=([^"'>]+)""", re.I
)


def _redirect_target(path: Path) -> str | None:
    """The URL of a ``<meta http-equiv="refresh">`` page (Jupyter Book's root ``index.html``), else None."""
    match = _REFRESH.search(path.read_text(encoding="utf-8", errors="replace")[:4096])
    return match.group(1).strip() if match else None


_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".svg", ".gif", ".webp")


def alt_problems(page: str, images) -> list[Problem]:
    """Images whose alt text is missing, empty or a file name (``../_images/3f2a.png``)."""
    problems = []
    for img in images:
        alt = (img.get("alt") or "").strip()
        if not alt or alt.lower().endswith(_IMAGE_SUFFIXES) or "_images/" in alt:
            problems.append(
                Problem(
                    page,
                    "alt",
                    f"image {img['src']} has no alt text" + (f" (it says {alt!r})" if alt else ""),
                )
            )
    return problems


def check_page(
    browser: Chromium,
    session: str,
    site: Path,
    base: str,
    page: str,
    *,
    screenshots: Path | None = None,
    anchor_cache: dict[Path, set[str]] | None = None,
    timeout: float = PAGE_TIMEOUT,
) -> PageReport:
    """Open ``page`` (a path in ``site``) in ``session`` and collect its problems (and screenshot)."""
    redirect = _redirect_target(site / page)
    if redirect is not None:  # the root index.html only sends the reader on: check where to
        links = [urllib.parse.urljoin(base + urllib.parse.quote(page), redirect)]
        return PageReport(page, check_links(site, page, links, base, anchor_cache))
    since = len(browser.events)
    url = base + urllib.parse.quote(page)
    nav = browser.call("Page.navigate", {"url": url}, session=session, timeout=timeout)
    if nav.get("errorText"):
        return PageReport(page, [Problem(page, "load", f"{url}: {nav['errorText']}")])
    if browser.wait_event("Page.loadEventFired", session, since, timeout) is None:
        return PageReport(page, [Problem(page, "load", f"{url}: no load event within {timeout:.0f} s")])
    result = browser.call(
        "Runtime.evaluate",
        {"expression": _PAGE_PROBE, "awaitPromise": True, "returnByValue": True},
        session=session,
        timeout=timeout,
    )
    if "exceptionDetails" in result:
        raise CDPError(f"{page}: page probe failed: {result['exceptionDetails'].get('text')}")
    probe = result["result"]["value"]
    with browser._lock:
        events = list(browser.events[since:])
    problems = _console_problems(page, events, session)
    problems += [
        Problem(page, "resource", f"broken image {img['src']}")
        for img in probe["images"]
        if img["complete"] and img["width"] == 0
    ]
    problems += alt_problems(page, probe["images"])
    problems += check_links(site, page, probe["links"], base, anchor_cache)
    problems += text_problems(page, probe)
    reading = browser.call(
        "Runtime.evaluate",
        {"expression": READER_PROBE, "returnByValue": True},
        session=session,
        timeout=timeout,
    )
    if "exceptionDetails" in reading:
        raise CDPError(f"{page}: reader probe failed: {reading['exceptionDetails'].get('text')}")
    problems += [Problem(page, kind, detail) for kind, detail in reader_problems(reading["result"]["value"])]
    report = PageReport(
        page, problems, n_math=probe["n_math"], n_untypeset=len(probe["untypeset"]), mathjax=probe["mathjax"]
    )
    if screenshots is not None and Path(page).name not in NO_SCREENSHOT:
        metrics = browser.call("Page.getLayoutMetrics", session=session)
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        height = int(min(max(size["height"], browser.window[1]), MAX_SHOT_HEIGHT))
        # the whole length in a window as wide as the reader's: captureBeyondViewport alone lays the
        # page out as wide as its widest element, and the theme then centres the text off the shot
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": browser.window[0], "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        try:
            shot = browser.call(
                "Page.captureScreenshot",
                {
                    "format": "png",
                    "clip": {"x": 0, "y": 0, "width": browser.window[0], "height": height, "scale": 1},
                },
                session=session,
            )
        finally:
            browser.call("Emulation.clearDeviceMetricsOverride", session=session)
        out = screenshots / (page.removesuffix(".html").replace("/", "__") + ".png")
        with atomic_write(out, "wb") as fh:
            fh.write(base64.b64decode(shot["data"]))
        report.screenshot = out
    return report


def check_site(
    site: str | os.PathLike,
    *,
    screenshots: str | os.PathLike | None = None,
    pages: Sequence[str] | None = None,
    executable: str | None = None,
    timeout: float = PAGE_TIMEOUT,
    progress: bool = True,
) -> list[PageReport]:
    """Open every page of the built ``site`` in headless Chromium; one :class:`PageReport` per page.

    Parameters
    ----------
    site : path-like
        The built HTML (``_build/html``), holding ``index.html``.
    screenshots : path-like, optional
        Folder for one PNG per page (created; ``None`` for none).
    pages : sequence of str, optional
        Pages to open (paths relative to ``site``); default :func:`html_pages`.
    executable : str, optional
        The browser (default :func:`find_chromium`).
    timeout : float
        Seconds for one page to load and typeset its math.
    progress : bool
        Show a tqdm progress bar.
    """
    from tqdm.auto import tqdm

    root = Path(site)
    todo = list(pages) if pages is not None else html_pages(root)
    shots = Path(screenshots) if screenshots is not None else None
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
    anchor_cache: dict[Path, set[str]] = {}
    with serve(root) as base, Chromium(executable) as browser:
        session = browser.new_page()
        return [
            check_page(
                browser,
                session,
                root,
                base,
                page,
                screenshots=shots,
                anchor_cache=anchor_cache,
                timeout=timeout,
            )
            for page in tqdm(todo, desc="pages", unit="page", disable=not progress)
        ]


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
    p.add_argument(
        "--screenshots", default="_build/screenshots", help="folder for the PNGs (default %(default)s)"
    )
    p.add_argument("--no-screenshots", action="store_true", help="take no screenshots")
    p.add_argument("--page", action="append", metavar="PATH", help="check only this page (repeatable)")
    p.add_argument("--browser", help="Chromium executable (default: $AETHEL_CHROMIUM or chromium on PATH)")
    p.add_argument(
        "--timeout", type=float, default=PAGE_TIMEOUT, help="seconds per page (default %(default)s)"
    )
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
