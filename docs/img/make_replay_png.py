"""Remake docs/img/replay.png, the README's screenshot of the replay page, from the committed
SCRIPTED sample runs in docs/runs/: `.venv/bin/python docs/img/make_replay_png.py` (needs
Debian's chromium and chromium-driver, and Selenium)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from stepswitch.site.build import build_site

ROOT = Path(__file__).resolve().parents[2]
OPEN_STEPS = 'document.querySelectorAll(".col").forEach(c => { c.querySelectorAll("details")[7].open = true; });'  # noqa: E501 -- one line of the page's own script


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        built = build_site([ROOT / "docs" / "runs"], Path(tmp) / "site", "Stepswitch replay")
        options = webdriver.ChromeOptions()
        for arg in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp}/profile",
            "--window-size=1280,1300",
            "--hide-scrollbars",
        ):
            options.add_argument(arg)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            driver.get(built.page.as_uri() + "#b0/t0")  # the task opened, side by side
            driver.execute_script(OPEN_STEPS)  # the edit step's tool call, in both columns
            driver.execute_script(  # from the tasks table down into the steps
                "window.scrollTo(0, document.querySelector('table.tasks').offsetTop - 60)"
            )
            driver.save_screenshot(str(ROOT / "docs" / "img" / "replay.png"))
        finally:
            driver.quit()


if __name__ == "__main__":
    main()
