"""The widgets in a real JupyterLab, in a real (headless) Chromium.

nbval proves the cells run and their text holds; this proves what a person sees: JupyterLab on 127.0.0.1
opens the notebook, runs every cell, no cell shows an error, and changing a widget control redraws the
timeline and the verdict; the step-through widget (``tests/viz/browser_stepper.ipynb``) steps and crashes
where asked; the prediction widget (``tests/viz/browser_predict.ipynb``) checks the answer picked and shows
the reply; every reveal (the output that answers a question) is folded when a workshop notebook opens and
after Run All, and opens once its question is answered, by the widget or by a variable and its check. How long
a learner waits from changing the explorer's seed to the new figure painted, with and without another core
busy, is timed in the page and reported (``artifacts/browser/felt_latency.json``, issue 31). Screenshots
before and after each change go to ``artifacts/browser/``.

Needs Debian's ``chromium`` and the ``playwright`` package (no browser download). Without them the test is
skipped, unless ``SIMKIT_REQUIRE_BROWSER=1`` (as ``.ci/run`` sets): then it fails.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "browser"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
REQUIRED = os.environ.get("SIMKIT_REQUIRE_BROWSER") == "1"
TOKEN = "simkit-browser-test"
#: Notebooks of the tests themselves, served beside the workshop's: their widgets do not depend on the
#: workshop text.
FIXTURES = ("browser_stepper.ipynb", "browser_predict.ipynb")


def _need(condition: bool, why: str):
    if not condition:
        (pytest.fail if REQUIRED else pytest.skip)(why)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on a free loopback port, serving a copy of the notebooks; stopped afterwards."""
    _need(Path(CHROMIUM).exists(), f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    root = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    for fixture in FIXTURES:                         # the tests' own notebooks, beside the workshop's
        shutil.copy(Path(__file__).with_name(fixture), root / "notebooks" / fixture)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = root / "settings" / "@jupyterlab"
    for extension, plugin, value in [("apputils-extension", "notification", '{"fetchNews": "false"}'),
                                     ("notebook-extension", "tracker", '{"windowingMode": "none"}')]:
        (settings / extension).mkdir(parents=True)      # no news prompt; every cell in the page, not windowed
        (settings / extension / f"{plugin}.jupyterlab-settings").write_text(value)
    log = open(root / "lab.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
         f"--port={port}", f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root / 'notebooks'}",
         f"--LabApp.workspaces_dir={root / 'workspaces'}", "--LabApp.expose_app_in_browser=True",
         "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "MPLBACKEND": "module://matplotlib_inline.backend_inline",
             "JUPYTERLAB_SETTINGS_DIR": str(root / "settings")})
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=1)
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail(f"JupyterLab exited: {(root / 'lab.log').read_text()[-2000:]}")
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not answer on 127.0.0.1 within 60 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api") if not REQUIRED else __import__(
        "playwright.sync_api", fromlist=["sync_playwright"])
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        yield b
        b.close()


def _end_sessions(lab: str, notebook: str) -> None:
    """Shut down every kernel session of ``notebook`` through the server's REST API (``/api/sessions``), so
    that the page opening it starts a new kernel."""
    url = f"{lab}/api/sessions"
    with urllib.request.urlopen(f"{url}?token={TOKEN}", timeout=60) as r:
        sessions = json.load(r)
    for session in sessions:
        if session.get("path", "").endswith(notebook):
            urllib.request.urlopen(urllib.request.Request(f"{url}/{session['id']}?token={TOKEN}",
                                                          method="DELETE"), timeout=120).close()


def open_and_run_all(browser, lab: str, notebook: str, fresh_kernel: bool = False):
    """Open ``notebook`` in JupyterLab, run all its cells (JupyterLab's own "Run All Cells" command) and wait
    until every code cell has run and the kernel is idle; return the page. ``fresh_kernel``: a new kernel
    (JupyterLab keeps a notebook's kernel, and what it was told, across pages): its sessions are ended first,
    not restarted in the page (under load, a restarted kernel's status stayed short of 'idle' for 300 s in
    one of six CI rehearsals, though polled)."""
    if fresh_kernel:
        _end_sessions(lab, notebook)
    page = browser.new_page(viewport={"width": 1500, "height": 2600})   # a whole widget in view, painted
    page.set_default_timeout(120_000)
    page.goto(f"{lab}/lab/tree/{notebook}?reset&token={TOKEN}")      # a fresh workspace: only this notebook
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    current = "window.jupyterapp.shell.currentWidget"
    page.wait_for_function(f"() => {current} && {current}.sessionContext.session?.kernel?.status === 'idle'",
                           timeout=300_000, polling=1000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    try:
        page.wait_for_function(
            f"() => {{ const nb = {current}; const cells = nb.content.widgets.filter(c => c.model.type === "
             "'code'); return cells.every(c => c.model.executionCount !== null) &&"
            " nb.sessionContext.session.kernel.status === 'idle'; }", timeout=300_000, polling=1000)
    except Exception:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{notebook}-timeout.png"))
        raise
    return page


def assert_no_errors(page):
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    texts = [errors.nth(i).inner_text() for i in range(errors.count())]
    assert not [t for t in texts if "Traceback" in t or "Error" in t], texts


def widget_with(page, label: str, source: str):
    """The widget box (VBox) whose controls include one labelled ``label``, in the cell whose code contains
    ``source`` (scrolled into view first: JupyterLab renders only the cells near the viewport)."""
    page.evaluate("""async (source) => {
        const nb = window.jupyterapp.shell.currentWidget.content;
        const i = nb.widgets.findIndex(c => c.model.sharedModel.getSource().includes(source));
        nb.activeCellIndex = i;
        await nb.scrollToItem(i, "center");
    }""", source)
    box = page.locator(".widget-vbox").filter(has=page.locator(".widget-label", has_text=label)).last
    try:
        box.scroll_into_view_if_needed()
    except Exception:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"no-widget-{label}.png"), full_page=True)
        raise
    return box


def state(box) -> tuple[str, str]:
    """What a person sees of the widget's result once drawn: the verdict text and the figure's image data."""
    out = box.locator(".widget-output").last
    out.locator("img").first.wait_for()
    return out.inner_text(), out.locator("img").first.get_attribute("src")


def settled(box) -> tuple[str, str]:
    """The widget's result once it has stopped changing (its output arrives in several messages)."""
    last = None
    while True:
        now = state(box)
        if now == last:
            return now
        last = now
        time.sleep(1.0)


def blank(src: str) -> bool:
    """Is this data-URL image one flat colour (a figure drawn with nothing on it)?"""
    import base64
    import io

    from PIL import Image, ImageStat
    image = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1]))).convert("L")
    return ImageStat.Stat(image).stddev[0] < 1.0


def choose(box, label: str, option: str):
    """Pick ``option`` in the widget's dropdown labelled ``label``, as a person would."""
    box.locator(".widget-dropdown", has=box.page.locator("label",
                                                         has_text=label)).locator("select").select_option(
        option)


def wait_changed(box, before, timeout: float = 120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            now = settled(box)
        except Exception:   # the output is being redrawn
            now = None
        if now is not None and now[0] != before[0] and now[1] != before[1]:
            return now
        time.sleep(0.5)
    pytest.fail("the widget's verdict and plot did not change")


def shot(box, name: str):
    """A screenshot of the widget once its figure has been decoded and painted."""
    img = box.locator(".widget-output img").last
    img.evaluate("img => img.decode()")
    img.scroll_into_view_if_needed()
    box.scroll_into_view_if_needed()
    box.page.wait_for_timeout(1000)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    box.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), clip=box.bounding_box())


def first_drawing(browser, lab, notebook: str, label: str, source: str, name: str):
    """Open ``notebook``, run it all without an error, and find its widget (see :func:`widget_with`); returns
    the page, the widget and what it first shows, screenshot as ``<name>-before``."""
    page = open_and_run_all(browser, lab, notebook)
    assert_no_errors(page)
    box = widget_with(page, label, source)
    before = settled(box)
    shot(box, f"{name}-before")
    return page, box, before


def test_explorer_redraws_for_a_new_crash_position_and_strategy(lab, browser):
    page, box, before = first_drawing(browser, lab, "01_two_kinds_of_progress.ipynb", "crash at",
                                      "widgets.explorer()", "explorer")
    assert "crash: before_event_commit at e70 (position 70)" in before[0]
    readout = box.locator(".widget-slider", has=page.locator("label", has_text="at position")).locator(
        ".widget-readout")
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("150")
    page.keyboard.press("Enter")
    moved = wait_changed(box, before)
    assert "crash: before_event_commit at e150 (position 150)" in moved[0]
    shot(box, "explorer-position")
    choose(box, "strategy", "persist_token_on_fetch")
    after = wait_changed(box, moved)
    assert "persist_token_on_fetch" in after[0] and "False" in after[0]
    shot(box, "explorer-strategy")
    page.close()
    assert not any(blank(x[1]) for x in (before, moved, after))     # the figure itself is redrawn, not blank


#: In the page: from the control's ``change`` event (what a person's edit fires) to the first frame painted
#: after the new figure is decoded (two animation frames: the callback of the second runs once the first is
#: painted). Also when the output first changed (the kernel's first reply) and when the new image arrived.
FELT_JS = """([box, old]) => {
    const out = [...box.querySelectorAll('.widget-output')].pop();
    const felt = {t0: null, first: null, image: null, painted: null};
    window.__felt = new Promise((resolve) => {
        box.addEventListener('change', () => { felt.t0 = performance.now(); }, {capture: true, once: true});
        const seen = new MutationObserver(() => {
            if (felt.t0 === null) return;
            if (felt.first === null) felt.first = performance.now();
            const img = out.querySelector('img');
            if (!img || img.src === old || felt.image !== null) return;
            felt.image = performance.now();
            seen.disconnect();
            img.decode().then(() => requestAnimationFrame(() => requestAnimationFrame(() => {
                felt.painted = performance.now();
                resolve({felt: felt.painted - felt.t0, reply: felt.first - felt.t0,
                         image: felt.image - felt.t0});
            })));
        });
        seen.observe(out, {subtree: true, childList: true, attributes: true, characterData: true});
    });
}"""


def felt_change(box, act) -> dict:
    """Do ``act()`` (a person's edit of one control) and time it in the page (:data:`FELT_JS`), in ms:
    ``felt`` until the new figure is painted, ``reply`` until the output first changed, ``image`` until the
    new image arrived."""
    old = state(box)
    box.page.evaluate(FELT_JS, [box.element_handle(), old[1]])
    act()
    timed = box.page.evaluate("() => window.__felt")
    now = settled(box)
    assert now[0] != old[0] and now[1] != old[1] and not blank(now[1]), "the change did not redraw the widget"
    return {k: round(v, 1) for k, v in timed.items()}


def test_explorer_felt_latency_idle_and_with_the_other_core_busy(lab, browser):
    """What a learner waits for (issue 31): from changing the explorer's seed (a new run each time) to the new
    figure painted, timed in the page, with the machine as it is and then with a process spinning on another
    core. Reported (printed, and ``artifacts/browser/felt_latency.json``, with the machine's load average),
    not asserted: a test checks behaviour; the timings are the benchmark's to judge. Each change must still
    redraw the verdict and a figure that is not blank."""
    import json
    import statistics

    page = open_and_run_all(browser, lab, "01_two_kinds_of_progress.ipynb")
    assert_no_errors(page)
    box = widget_with(page, "crash at", "widgets.explorer()")
    seed = box.locator(".widget-text", has=page.locator("label", has_text="seed")).locator("input")

    def set_seed(value: int):
        def act():
            seed.fill(str(value))
            seed.press("Enter")
        return act

    report = {}
    for phase, seeds in [("idle", range(101, 107)), ("other_core_busy", range(201, 207))]:
        spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if phase != "idle" else None
        try:
            times = [felt_change(box, set_seed(s)) for s in seeds]
        finally:
            if spinner is not None:
                spinner.kill()
                spinner.wait()
        report[phase] = {"load_average": round(os.getloadavg()[0], 1),
                         "felt_ms_median": statistics.median(t["felt"] for t in times),
                         "felt_ms_max": max(t["felt"] for t in times),
                         "reply_ms_median": statistics.median(t["reply"] for t in times),
                         "image_ms_median": statistics.median(t["image"] for t in times), "changes": times}
    page.close()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "felt_latency.json").write_text(json.dumps(report, indent=1))
    print("\nexplorer felt latency (ms):", json.dumps({k: {m: v for m, v in r.items() if m != "changes"}
                                                      for k, r in report.items()}))


def test_comparison_redraws_for_another_shortcut(lab, browser):
    page, box, before = first_drawing(browser, lab, "04_unsafe_shortcuts.ipynb", "shortcut",
                                      "widgets.comparison(", "comparison")
    assert "watermark_only_dedup" in before[0]
    choose(box, "shortcut", "in_memory_quarantine")
    after = wait_changed(box, before)
    assert "in_memory_quarantine" in after[0] and "watermark_only_dedup" not in after[0]
    shot(box, "comparison-after")
    page.close()
    assert not blank(before[1]) and not blank(after[1])


def output_state(box, i: int, needle: str, timeout: float = 120) -> tuple[str, str]:
    """The text and first image of the widget's ``i``-th output once its text contains ``needle`` and stops
    changing."""
    out = box.locator(".widget-output").nth(i)
    deadline, last = time.time() + timeout, None
    while time.time() < deadline:
        try:
            now = out.inner_text(), out.locator("img").first.get_attribute("src", timeout=2000)
        except Exception:   # being redrawn
            now = None
        if now is not None and needle in now[0] and now[1] and now == last:
            return now
        last = now
        time.sleep(1.0)
    pytest.fail(f"the widget's output {i} never showed {needle!r}; it shows "
                f"{last[0][:300] if last else None!r}")


def test_stepper_steps_through_a_run_and_crashes_where_asked(lab, browser):
    """The step slider moves the instant (its note, the timeline's line, memory beside durable state); "crash
    here" reruns with a crash at the next crash-point pass and says which events change fate."""
    page = open_and_run_all(browser, lab, "browser_stepper.ipynb")
    assert_no_errors(page)
    box = widget_with(page, "step", "widgets.stepper(")
    first = output_state(box, 0, "after row 0")
    shot(box, "stepper-before")
    readout = box.locator(".widget-slider", has=page.locator("label",
                                                             has_text="step")).locator(".widget-readout")
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("2")
    page.keyboard.press("Enter")
    moved = output_state(box, 0, "after row 2: worker 1 barrier C8")
    assert "crash here: after_page_barrier" in moved[0] and moved[1] != first[1]
    shot(box, "stepper-row-2")
    box.locator("button", has_text="crash here").click()
    crashed = output_state(box, 1, "change fate")
    assert "crash here: --crash after_page_barrier. 2 events change fate: e104, e106." in crashed[0]
    assert "lost" in crashed[0]
    box.locator(".widget-output").nth(1).locator("img").first.scroll_into_view_if_needed()
    page.wait_for_timeout(1000)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "stepper-crash-here.png"), clip=box.bounding_box())
    page.close()
    assert not any(blank(x[1]) for x in (first, moved, crashed))


def reply_text(box, needle: str, timeout: float = 60) -> str:
    """The text of the widget's output once it contains ``needle``."""
    out = box.locator(".widget-output").last
    deadline, text = time.time() + timeout, ""
    while time.time() < deadline:
        text = out.inner_text()
        if needle in text:
            return text
        time.sleep(0.5)
    pytest.fail(f"the widget's reply never showed {needle!r}; it shows {text[:300]!r}")


def shot_widget(box, name: str):
    """A screenshot of a widget without a figure (all of it in view, painted)."""
    box.scroll_into_view_if_needed()
    box.page.wait_for_timeout(500)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    box.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), clip=box.bounding_box())


def test_prediction_widget_checks_the_answer_picked(lab, browser):
    """The prediction widget: "check" with nothing picked asks for an answer; a wrong pick gets the answer and
    why, the right one is confirmed, each reply from simkit.workshop.check_prediction."""
    from simkit import workshop as check

    why = check.PREDICTIONS["shortcut_notices"][3]
    page = open_and_run_all(browser, lab, "browser_predict.ipynb")
    assert_no_errors(page)
    box = widget_with(page, "your answer", "check.predict(")
    answers = box.locator(".widget-toggle-buttons button")
    assert [answers.nth(i).inner_text().strip() for i in range(answers.count())] == [
        "stalls",
        "halts",
        "completes",
    ]
    shot_widget(box, "predict-before")
    press = box.locator("button.widget-button", has_text="check")
    press.click()
    assert "pick an answer above first" in reply_text(box, "pick an answer")
    answers.filter(has_text="halts").click()
    press.click()
    wrong = reply_text(box, "✗ not 'halts'")
    assert f"✗ not 'halts'. The answer is {why}" in wrong
    shot_widget(box, "predict-wrong")
    answers.filter(has_text="completes").click()
    press.click()
    right = reply_text(box, "✓ right.")
    assert f"✓ right. {why}" in right and "✗" not in right       # the reply replaces the last one
    shot_widget(box, "predict-right")
    page.close()


REVEAL = "details.simkit-reveal"


def open_unrun(browser, lab: str, notebook: str):
    """Open ``notebook`` as an attendee does, without running anything: the committed outputs as they are."""
    page = browser.new_page(viewport={"width": 1500, "height": 2600})
    page.set_default_timeout(120_000)
    page.goto(f"{lab}/lab/tree/{notebook}?reset&token={TOKEN}")
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    page.wait_for_selector(REVEAL, state="attached")
    return page


def reveal_state(page) -> list[tuple[bool, bool]]:
    """For each reveal on the page: (open, is any of its content visible to a person)."""
    return page.evaluate("""(sel) => [...document.querySelectorAll(sel)].map(d => [d.open,
        [...d.children].filter(c => c.tagName !== 'SUMMARY').some(c => c.checkVisibility())])""", REVEAL)


@pytest.mark.parametrize("notebook", ["00_index.ipynb", "04_unsafe_shortcuts.ipynb"])
def test_a_committed_notebook_opens_with_every_answer_folded(lab, browser, notebook):
    """As committed (executed with every question unanswered), a notebook shows each reveal as a closed fold:
    its summary says to answer first, and nothing of the figure or table under it is drawn."""
    page = open_unrun(browser, lab, notebook)
    for i in range(page.locator(".jp-Cell").count()):          # every cell rendered, the last reveal included
        page.evaluate("async (i) => await window.jupyterapp.shell.currentWidget.content.scrollToItem(i)", i)
    states = reveal_state(page)
    assert states and all(not is_open and not visible for is_open, visible in states), states
    summary = page.locator(f"{REVEAL} > summary").first
    assert "answer the question above first" in summary.inner_text()
    summary.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"reveal-folded-{notebook}.png"))
    summary.click()  # a person may still look: the fold is a <details>
    assert reveal_state(page)[0] == [True, True]
    page.close()


def wait_reveals(page, expected: list[bool], timeout: float = 60) -> list[tuple[bool, bool]]:
    deadline, states = time.time() + timeout, None
    while time.time() < deadline:
        states = reveal_state(page)
        if [o for o, _ in states] == expected and all(o == v for o, v in states):
            return states
        time.sleep(0.5)
    pytest.fail(f"the reveals are {states}, expected open {expected}")


def test_a_reveal_opens_once_its_question_is_answered(lab, browser):
    """After Run All both reveals of the fixture are folded; answering the
    widget opens its reveal only; setting the variable and running its check
    opens the other, in place, without running the reveal's cell again."""
    page = open_and_run_all(browser, lab, "browser_predict.ipynb", fresh_kernel=True)   # nothing answered yet
    assert_no_errors(page)
    wait_reveals(page, [False, False])
    box = widget_with(page, "your answer", "check.predict(")
    box.locator(".widget-toggle-buttons button").filter(has_text="halts").click()
    box.locator("button.widget-button", has_text="check").click()       # a wrong answer is an answer too
    reply_text(box, "✗ not 'halts'")
    states = wait_reveals(page, [True, False])
    assert "widget reveal: the shortcut completes, unaware" in page.locator(REVEAL).first.inner_text(), states
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "reveal-opened-by-widget.png"))
    page.evaluate("""() => {
        const nb = window.jupyterapp.shell.currentWidget.content;
        const i = nb.widgets.findIndex(c => c.model.sharedModel.getSource() === "lost_event = None");
        nb.widgets[i].model.sharedModel.setSource("lost_event = 107");
        nb.activeCellIndex = i;
    }""")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-cell-and-select-next')")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-cell-and-select-next')")
    wait_reveals(page, [True, True])
    assert "variable reveal: nothing is lost" in page.locator(REVEAL).nth(1).inner_text()
    page.screenshot(path=str(ARTIFACTS / "reveal-opened-by-variable.png"))
    page.close()
