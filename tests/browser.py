"""Headless Chromium for the report tests: the DOM after the page's scripts ran, and a
screenshot. Each call is one browser process with its own profile, XDG folders and HOME under
a temporary folder, a timeout, and its whole process group killed when it ends.

Tests skip where no ``chromium`` is installed, and fail instead when
``INFERSWEEP_REQUIRE_BROWSER=1`` (CI installs it, so a missing browser is a CI defect).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

REQUIRE_ENV = "INFERSWEEP_REQUIRE_BROWSER"
NAMES = ("chromium", "chromium-browser")
WINDOW = (1200, 1100)
TIMEOUT = 90.0
# any host name resolves to nothing: a page that needs the network cannot load it
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update",
         "--disable-dev-shm-usage", "--disable-extensions", "--mute-audio",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--virtual-time-budget=10000")


def chromium() -> str:
    """The browser's path; skips the test (or fails it, when required) if there is none."""
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    why = f"no headless browser ({' or '.join(NAMES)}) installed"
    if os.environ.get(REQUIRE_ENV, "") not in ("", "0"):
        pytest.fail(f"{why}, and {REQUIRE_ENV} is set")
    pytest.skip(why)


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="chromium-") as tmp:
        t = Path(tmp)
        for d in ("profile", "config", "cache", "home", "tmp"):
            (t / d).mkdir()
        env = {**os.environ, "HOME": str(t / "home"), "XDG_CONFIG_HOME": str(t / "config"),
               "XDG_CACHE_HOME": str(t / "cache"), "TMPDIR": str(t / "tmp")}
        cmd = [chromium(), *FLAGS, f"--user-data-dir={t / 'profile'}", *args]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        finally:
            # the browser's helpers share its session (and so its process group)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def dump_dom(url: str, timeout: float = TIMEOUT) -> str:
    proc = _run(["--dump-dom", url], timeout)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return proc.stdout.decode()


def screenshot(url: str, png: Path, size: tuple[int, int] = WINDOW,
               timeout: float = TIMEOUT) -> bytes:
    proc = _run([f"--window-size={size[0]},{size[1]}", f"--screenshot={png}", url], timeout)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return png.read_bytes()


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's header."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24])


@dataclass
class ChartFacts:
    rendered: bool = False
    points: int = 0          # .scatterlayer .trace path.point
    traces: int = 0          # .scatterlayer .trace
    legend: list[str] = field(default_factory=list)


@dataclass
class DomFacts:
    charts: dict[str, ChartFacts] = field(default_factory=dict)  # by the chart div's id
    sources: list[str] = field(default_factory=list)  # every script src and link href
    elements: dict[str, int] = field(default_factory=dict)  # count per tag


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class _Parser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.facts = DomFacts()
        self.stack: list[tuple[str, set[str], str | None]] = []
        self.in_legend_text = False

    def _chart(self) -> ChartFacts | None:
        for _tag, _cls, ident in reversed(self.stack):
            if ident in self.facts.charts:
                return self.facts.charts[ident]
        return None

    def _under(self, cls: str) -> bool:
        return any(cls in c for _t, c, _i in self.stack)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = set((a.get("class") or "").split())
        self.facts.elements[tag] = self.facts.elements.get(tag, 0) + 1
        if tag == "script" and a.get("src"):
            self.facts.sources.append(a["src"])
        if tag == "link" and a.get("href"):
            self.facts.sources.append(a["href"])
        if tag == "div" and "plotly-graph-div" in cls and a.get("id"):
            self.facts.charts[a["id"]] = ChartFacts(rendered=a.get("data-rendered") == "yes")
        chart = self._chart()
        if chart is not None and self._under("scatterlayer"):
            if tag == "g" and "trace" in cls and not self._under("trace"):
                chart.traces += 1
            if tag == "path" and "point" in cls and self._under("trace"):
                chart.points += 1
        if chart is not None and tag == "text" and "legendtext" in cls:
            self.in_legend_text = True
            chart.legend.append("")
        if tag not in VOID:
            self.stack.append((tag, cls, a.get("id")))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag == "text":
            self.in_legend_text = False
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        if self.in_legend_text:
            chart = self._chart()
            if chart is not None:
                chart.legend[-1] += data


def dom_facts(html: str) -> DomFacts:
    p = _Parser()
    p.feed(html)
    p.close()
    return p.facts
