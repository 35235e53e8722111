"""The page and the dashboard in headless Chromium, as a person uses them: open the page from disk,
click into a task's steps, read what is shown. One browser for the session (a start costs about a
second); each test saves a screenshot in its temporary folder. Needs Debian's chromium and
chromium-driver (.ci/run installs them) and Selenium (the dev extras); skips without them."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stepswitch.site.build import build_site
from stepswitch.site.serve import start_dashboard

from .conftest import DemoRun, write_bench

pytestmark = pytest.mark.slow

CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARGS = (
    "--headless=new",
    "--no-sandbox",  # needed as root (CI)
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    webdriver = pytest.importorskip("selenium.webdriver", reason="Selenium is not installed")
    if not CHROMEDRIVER.exists() or not shutil.which("chromium"):
        pytest.skip("chromium and chromium-driver are not installed (.ci/run installs them)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ARGS:
        options.add_argument(arg)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    # An explicit driver: without it Selenium Manager would reach for the network.
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()


def wait(driver: Any, css: str) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as shown
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, 20).until(
        shown.visibility_of_element_located((By.CSS_SELECTOR, css))
    )


def wait_gone(driver: Any, css: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as shown
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 20).until(shown.invisibility_of_element_located((By.CSS_SELECTOR, css)))


def wait_all(driver: Any, css: str) -> list[Any]:
    wait(driver, css)
    return find(driver, css)


def find(driver: Any, css: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, css))


def link(driver: Any, text: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.PARTIAL_LINK_TEXT, text)


def task_link(driver: Any, name: str) -> Any:
    """A task's name in the tasks table."""
    return driver.find_element("xpath", f"//table[@class='tasks']//th/a[starts-with(., '{name}')]")


def test_the_page_from_disk_replays_a_tasks_steps_side_by_side(browser: Any, tmp_path: Path):
    built = build_site([write_bench(tmp_path / "bench1")], tmp_path / "site")
    browser.get(built.page.as_uri())

    assert wait(browser, "h1").text == "Stepswitch replay"
    totals = find(browser, "table.totals tbody tr")
    assert [row.text.split()[0] for row in totals] == ["ladder", "ultra"]
    task_link(browser, "general/mean_bug").click()
    assert wait(browser, ".task-view h3").text.startswith("Task: general/mean_bug")
    assert find(browser, ".task-view .task-text")[0].text == "the general/mean_bug task"
    columns = find(browser, ".task-view .col")
    assert [c.get_attribute("data-contestant") for c in columns] == ["ladder", "ultra"]
    ladder = columns[0]
    lines = [li.text for li in ladder.find_elements("css selector", ".events > li")]
    assert lines[0].split()[:4] == ["1", "plan", "large", "claude-opus-5"]
    assert "in 1,000 (40% cached) out 50" in lines[0] and "$0.0010" in lines[0]
    assert "edit refused, edit" in lines[1]
    assert ladder.find_element("css selector", "li.step .refused").text == "edit refused"
    failed = ladder.find_element("css selector", "li.gates details[open]")
    assert "FAILED tests/test_ops.py::test_mean" in failed.text  # a failed gate opens itself
    assert any("escalation 1: 2 gate failures; large takes the task over" in t for t in lines)
    assert any("second opinion reject (they disagree)" in t for t in lines)
    ladder.find_element("css selector", "li.step summary").click()  # open the plan step
    opened = ladder.find_element("css selector", "li.step details[open]").text
    assert 'done\n{"summary": "1. fix"}' in opened
    browser.save_screenshot(str(tmp_path / "task.png"))
    link(browser, "back to the tasks").click()
    wait_gone(browser, ".task-view")


def test_a_scripted_run_says_so_on_every_view(browser: Any, demo_run: DemoRun, tmp_path: Path):
    built = build_site([demo_run.folder], tmp_path / "site")
    browser.get(built.page.as_uri() + "#b0/t0")  # straight to the task, as a shared link opens

    assert "SCRIPTED" in wait(browser, ".banner").text
    wait(browser, ".task-view .col")
    steps = find(browser, ".task-view li.step")
    assert len(steps) == demo_run.record.totals.steps
    assert all("scripted" in s.text for s in steps)
    assert find(browser, "table.totals .b-scripted") and find(browser, "table.tasks .b-scripted")
    browser.save_screenshot(str(tmp_path / "demo.png"))


def test_the_built_in_contestants_steps_say_built_in_not_scripted(browser: Any, tmp_path: Path):
    built = build_site([write_bench(tmp_path / "b", oracle=True, null=True)], tmp_path / "site")
    browser.get(built.page.as_uri() + "#b0/t0")

    columns = {c.get_attribute("data-contestant"): c for c in wait_all(browser, ".task-view .col")}
    for name in ("oracle", "null"):
        steps = columns[name].find_elements("css selector", "li.step summary")
        assert steps and all("built-in" in s.text and "scripted" not in s.text for s in steps)
        assert "built-in" in columns[name].find_element("css selector", "h4").text
    assert "built-in" not in columns["ladder"].text
    assert not find(browser, ".banner")  # no SCRIPTED banner: nothing here replays a script


def test_a_scripted_demo_run_shows_its_as_if_bill_and_each_steps_as_if_price(
    browser: Any, demo_run: DemoRun, tmp_path: Path
):
    built = build_site([demo_run.folder], tmp_path / "site")
    browser.get(built.page.as_uri() + "#b0/t0")

    bill = wait(browser, ".task-view .col .as-if").text
    assert bill.startswith("as if served by the Anthropic ladder")
    assert "the recorded bill stays $0.0000: no model was called" in bill
    assert "on claude-opus-5 alone" in bill
    find(browser, ".task-view li.step summary")[0].click()  # the plan step, on large
    opened = wait(browser, ".task-view li.step details[open] .facts").text
    assert "as if served by claude-opus-5: $" in opened and "at list price" in opened
    browser.save_screenshot(str(tmp_path / "as-if.png"))


FITS = """
const box = document.querySelector('.chart-box').getBoundingClientRect();
const cap = document.querySelector('.chart-caption');
const r = cap.getBoundingClientRect();
const svg = document.querySelector('svg.chart').getBoundingClientRect();
const cut = [];  // the chart's own texts (ticks, task names) that its box cuts
document.querySelectorAll('svg.chart text').forEach(t => {
  const b = t.getBoundingClientRect();
  if (b.left < svg.left || b.right > svg.right || b.top < svg.top || b.bottom > svg.bottom)
    cut.push(t.textContent);
});
return {text: cap.textContent, scroll: cap.scrollWidth, client: cap.clientWidth, cut: cut,
        inside: r.left >= box.left && r.right <= box.right && r.top >= box.top
                && r.bottom <= box.bottom};
"""


@pytest.mark.parametrize("width", [1280, 600])
def test_the_charts_caption_fits_inside_the_chart_at_a_wide_and_a_narrow_width(
    browser: Any, demo_run: DemoRun, tmp_path: Path, width: int
):
    built = build_site([demo_run.folder], tmp_path / "site")
    browser.set_window_size(width, 1000)
    try:
        browser.get(built.page.as_uri())
        wait(browser, ".chart-caption")
        fits = browser.execute_script(FITS)
        browser.save_screenshot(str(tmp_path / f"chart-{width}.png"))
    finally:
        browser.set_window_size(1400, 1000)  # the session's size, for the other tests

    assert "every task run here cost $0.0000" in fits["text"]
    assert fits["scroll"] <= fits["client"] and fits["inside"], fits
    assert fits["cut"] == []


def test_the_dashboard_lists_runs_shows_the_ledger_and_replays_a_run(
    browser: Any, demo_run: DemoRun, tmp_path: Path
):
    runs = tmp_path / "runs"
    shutil.copytree(demo_run.folder, runs / demo_run.record.run_id)
    server = start_dashboard(runs, demo_run.repo / ".ssw" / "ledger.sqlite", "127.0.0.1", 0)
    try:
        browser.get(server.url)
        assert wait(browser, "h1").text == "Stepswitch dashboard"
        ledger = find(browser, "table.ledger tbody tr")
        assert ledger[-1].text.split()[:2] == ["total", "12"]
        link(browser, "by step type").click()
        wait(browser, "table.ledger")
        kinds = [r.text.split()[0] for r in find(browser, "table.ledger tbody tr")]
        assert {"plan", "review", "edit", "total"} <= set(kinds)
        browser.save_screenshot(str(tmp_path / "dashboard.png"))
        link(browser, demo_run.record.run_id).click()
        wait(browser, "table.tasks")
        task_link(browser, "word_count in textstats").click()
        wait(browser, ".task-view .col")
        assert len(find(browser, ".task-view li.step")) == 12
        assert "done — the gates passed" in find(browser, ".task-view .run")[0].text
        browser.save_screenshot(str(tmp_path / "replay.png"))
    finally:
        server.shutdown()
        server.server_close()


def test_a_200_task_bench_page_opens_and_its_last_task_replays(browser: Any, tmp_path: Path):
    tasks = tuple(f"general/task{i:03}" for i in range(200))
    built = build_site([write_bench(tmp_path / "bench", tasks=tasks)], tmp_path / "site")
    began = time.perf_counter()
    browser.get(built.page.as_uri())
    wait(browser, "table.tasks")
    opened = time.perf_counter() - began
    loaded_ms = browser.execute_script(
        "const t = performance.getEntriesByType('navigation')[0]; return t.loadEventEnd;"
    )
    task_link(browser, "general/task199").click()
    wait(browser, ".task-view .col")

    assert len(find(browser, "table.tasks tbody tr")) == 200
    assert len(find(browser, ".task-view .col")) == 2
    # Measured, not asserted (CI is a loaded machine): `pytest -rP` prints it.
    print(
        f"200 tasks, {built.bytes / 1e6:.1f} MB: tasks table shown after {opened:.2f} s "
        f"(load event at {loaded_ms:.0f} ms)"
    )


def test_a_step_that_a_fallback_took_says_so_on_the_page(browser: Any, tmp_path: Path):
    from tests.agent.test_fallback import QUICK_RETRY, Reply, run_with
    from tests.harness.repo import sample_repo

    run_with(tmp_path, sample_repo(tmp_path / "repo", "mean_bug"), Reply(503, headers=QUICK_RETRY))
    built = build_site([tmp_path / "records"], tmp_path / "site")
    browser.get(built.page.as_uri() + "#b0/t0")

    steps = wait_all(browser, ".task-view li.step")
    assert "fallback from" not in steps[0].text and "HTTP 503" in steps[0].text
    assert find(steps[1], ".b-fallback")[0].text == "fallback from main"
    steps[1].find_element("css selector", "summary").click()
    opened = steps[1].find_element("css selector", "details[open]").text
    assert "fallback: main: gave up after 4 attempts" in opened
    browser.save_screenshot(str(tmp_path / "fallback.png"))
