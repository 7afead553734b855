"""The system Chromium driven by Selenium through Debian's ``chromedriver`` (no browser
download), for the report's interactive pages: headless, every host name unresolvable, a
temporary profile, downloads into a folder of the test's, the viewport at a given size.

Skips without chromium, chromedriver or selenium, and fails instead when
``INFERSWEEP_REQUIRE_BROWSER=1`` (as in CI)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from tests import browser

WINDOW = (1280, 800)


@contextlib.contextmanager
def chromium_driver(downloads: Path, window: tuple[int, int] = WINDOW):
    chromium = browser.chromium()
    driver_path = shutil.which("chromedriver")
    if driver_path is None:
        if os.environ.get(browser.REQUIRE_ENV, "") not in ("", "0"):
            pytest.fail("no chromedriver (Debian's chromium-driver)")
        pytest.skip("no chromedriver (Debian's chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--disable-extensions",
                 f"--window-size={window[0]},{window[1]}"):
        opts.add_argument(flag)
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        opts.add_argument(f"--user-data-dir={profile}")
        opts.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                               "download.prompt_for_download": False})
        driver = webdriver.Chrome(options=opts, service=Service(executable_path=driver_path))
        try:
            driver.set_page_load_timeout(30)
            # the viewport itself at ``window`` (--window-size counts the window's frame)
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                "width": window[0], "height": window[1], "deviceScaleFactor": 1,
                "mobile": False})
            yield driver
        finally:
            driver.quit()


def wait_for(what, timeout: float = 15.0):
    """``what()``'s first truthy value, polled until ``timeout`` (then its last value)."""
    end = time.monotonic() + timeout
    while True:
        value = what()
        if value or time.monotonic() > end:
            return value
        time.sleep(0.05)
