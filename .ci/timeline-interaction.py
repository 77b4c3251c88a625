#!/usr/bin/env python3
"""Drives a `statejournal timeline` page in headless Chromium, as a user would, and checks what it shows.

Speaks the DevTools protocol over --remote-debugging-pipe (the browser reads commands on fd 3 and writes
answers on fd 4, each a JSON text ended by a NUL byte), so it needs nothing beyond python3 and chromium.
Mouse clicks and typing are real input events (Input.dispatchMouseEvent, Input.insertText); what the
page then shows is compared with what the model embedded in the page says it must show:

  1. clicking an epoch's bar selects it: the details name that epoch and count the paths it changed,
     and the address becomes #epoch=N;
  2. typing in "Filter paths" leaves the lanes of the paths that contain the text and their ancestors,
     without collapse toggles; clicking one shows its state; clearing the filter brings the lanes back;
  3. clicking an expanded subtree's toggle collapses it: its descendants' lanes go, its toggle turns,
     clicking its name lists the changes under it; clicking the toggle again brings them back;
  4. "Collapse all" leaves the top-level paths;
  5. every outage (a catch-up epoch whose metadata has outageStarted) has its band drawn: the red stripe
     atop the epochs' chart, read back from the canvas's pixels, covers the boundary between the last
     epoch committed before the outage began and the catch-up epoch's bar, and nothing else; hovering
     over it gives the chart a tooltip naming the outage's reason, the time it began and the catch-up
     epoch, with control characters, line separators and bidirectional overrides from the metadata
     written as \\u{...} escapes; clicking it shows the catch-up epoch, "After an outage" and the reason,
     escaped the same way, and no path the catch-up pass wrote again listed as removed.

  6. every replication term's start (a marker epoch: no entries, statejournal.event=replicaTermBegan)
     has its band: the term strip under the markers row changes shade at the marker's column and a
     line marks it; hovering over the strip gives a tooltip naming the term and the epoch it continues
     from; clicking the marker's column shows the epoch and the sentence that says what was lost.

With --outages, only step 5 runs, and the page must show at least one outage. With --terms, only
step 6 runs, and the page must show at least one term's start.

After every step the page must have recorded no error (<body data-errors>). Screenshots of each step are
written to the artefacts directory.

Usage: timeline-interaction.py CHROMIUM PAGE.html ARTEFACTS-DIRECTORY NAME [--outages | --terms]
"""
import base64
import datetime
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

GUTTER, RIGHT, ROW_H = 250, 14, 22  # as in timeline.js


class Failure(Exception):
    pass


class Browser:
    """Headless Chromium with one page, driven through the DevTools protocol on a pipe."""

    def __init__(self, chromium, log_path):
        self.profile = tempfile.mkdtemp(prefix="statejournal-cdp-")
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # Out of the way of 3 and 4, which the child's ends are moved to.
        child_in = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
        child_out = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)

        def move_pipes():
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        self.log = open(log_path, "wb")
        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--hide-scrollbars", "--remote-debugging-pipe",
             "--user-data-dir=" + self.profile, "--window-size=1500,1250", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, pass_fds=(3, 4), preexec_fn=move_pipes)
        os.close(child_in)
        os.close(child_out)
        self.write, self.read = to_browser_w, from_browser_r
        self.buffer = b""
        self.next_id = 0
        self.session = None
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next((t for t in targets if t["type"] == "page"), None)
        if page is None:
            page = {"targetId": self.call("Target.createTarget", url="about:blank")["targetId"]}
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=1500, height=1250, deviceScaleFactor=1, mobile=False)

    def call(self, method, timeout=60, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if self.session is not None and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self.write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self.buffer:
                text, self.buffer = self.buffer.split(b"\0", 1)
                answer = json.loads(text)
                if answer.get("id") != self.next_id:
                    continue  # an event, or an answer to nothing we wait for
                if "error" in answer:
                    raise Failure("%s: %s" % (method, answer["error"].get("message")))
                return answer.get("result", {})
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.read], [], [], left)[0]:
                raise Failure("%s: no answer from chromium in %d s" % (method, timeout))
            data = os.read(self.read, 1 << 20)
            if not data:
                raise Failure("%s: chromium closed the pipe (exit status %s)" % (method, self.process.poll()))
            self.buffer += data

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (awaited when it is a promise)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise Failure("%s: %s" % (expression, details.get("exception", {}).get("description", details.get("text"))))
        return result["result"].get("value")

    def click(self, x, y):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left" if kind != "mouseMoved" else "none",
                      clickCount=1 if kind != "mouseMoved" else 0)
        self.settle()

    def click_element(self, selector):
        """Scrolls the element into view and clicks its centre."""
        box = self.evaluate(
            "(() => { const el = document.querySelector(%s); if (!el) return null; el.scrollIntoView({block: 'center'});"
            " const r = el.getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()"
            % json.dumps(selector))
        if box is None:
            raise Failure("no %s on the page to click" % selector)
        self.click(box["x"], box["y"])

    def settle(self):
        """Waits for two animation frames: the page draws in requestAnimationFrame."""
        self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")

    def screenshot(self, path):
        with open(path, "wb") as out:
            out.write(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Failure:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


class Model:
    """The model the page embeds, and what the page must show for it."""

    def __init__(self, model):
        self.m = model
        paths = model["paths"]
        self.name, self.end, self.start, self.events = paths["name"], paths["end"], paths["start"], paths["events"]
        self.n = len(self.name)
        self.epochs = model["epochs"]["n"]
        self.parent = [-1] * self.n
        stack = []
        for i in range(self.n):
            while stack and self.end[stack[-1]] <= i:
                stack.pop()
            self.parent[i] = stack[-1] if stack else -1
            stack.append(i)
        self.full = []
        for i in range(self.n):
            own = self.name[i].replace("\\", "\\\\").replace("/", "\\/")
            self.full.append(own if self.parent[i] < 0 else self.full[self.parent[i]] + "/" + own)

        self.by_row = {}
        for i in range(self.n):
            for row in self.rows_of(i):
                self.by_row.setdefault(row, []).append(i)

    def rows_of(self, i):
        return [v >> 1 for v in self.events[self.start[i]:self.start[i + 1]]]

    def changed_at(self, row, nodes=None):
        """The paths written or removed at a row (of `nodes`, a range, when given), as the page lists them."""
        return [i for i in self.by_row.get(row, []) if nodes is None or i in nodes]

    def filtered(self, text):
        needle = text.lower()
        keep = set()
        for i in range(self.n):
            if needle in self.full[i].lower():
                a = i
                while a >= 0 and a not in keep:
                    keep.add(a)
                    a = self.parent[a]
        return sorted(keep)

    def roots(self):
        out, i = [], 0
        while i < self.n:
            out.append(i)
            i = self.end[i]
        return out


def fmt(number):
    return "{:,}".format(number)


def printable(text):
    """Text from the store as the page must show it on one line (timeline.js's printable)."""
    def hidden(c):
        return (c < 0x20 or 0x7F <= c <= 0x9F or c in (0x200E, 0x200F) or 0x2028 <= c <= 0x202E
                or 0x2066 <= c <= 0x2069)
    return "".join("\\u{%x}" % ord(ch) if hidden(ord(ch)) else ch for ch in text)


def has_hidden(text):
    return printable(text) != text


def millis(stamp):
    """Milliseconds since 1970 of an RFC 3339 time with a Z, as Date.parse reads it."""
    when = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return round(when.timestamp() * 1000)


def check_outages(browser, model, name, check, page_state, problems):
    """Step 5: the bands of the outages, their tooltips and the catch-up epochs' details."""
    epochs = model.m["epochs"]
    times, numbers = epochs["t"], epochs["n"]
    metadata = [epochs["metadata"][k] or {} for k in epochs["m"]]
    count = len(numbers)
    outages = []
    for row, md in enumerate(metadata):
        if md.get("outageStarted"):
            started = millis(md["outageStarted"])
            before = max([r for r in range(row) if times[r] < started], default=-1)
            outages.append({"row": row, "before": before, "started": started, "stamp": md["outageStarted"],
                            "reason": md.get("outageReason", "a failed write or sync")})
    if not outages:
        raise Failure("the page's store has no catch-up epoch with outageStarted in its metadata")
    browser.evaluate("(() => { const c = document.getElementById('epochs-canvas'); c.scrollIntoView({block: 'center'}); return true; })()")
    browser.settle()
    canvas = browser.evaluate(
        "(() => { const c = document.getElementById('epochs-canvas'); const r = c.getBoundingClientRect();"
        " return {left: r.left, top: r.top, width: c.clientWidth, scale: c.width / c.clientWidth}; })()")
    width = canvas["width"] - GUTTER - RIGHT
    x_of = lambda row: GUTTER + (row + 0.5) / count * width
    # The stripe atop the bands (4 to 7 px down the chart): the red columns, as runs.
    red = browser.evaluate(
        "(() => { const c = document.getElementById('epochs-canvas'); const s = c.width / c.clientWidth;"
        " const d = c.getContext('2d').getImageData(0, Math.round(5 * s), c.width, 1).data; const out = [];"
        " for (let x = 0; x < c.width; x++) { const i = 4 * x;"
        "   if (d[i] > 150 && d[i + 1] < 120 && d[i + 2] < 120 && d[i + 3] > 100) out.push(x / s); }"
        " return out; })()")
    runs = []
    for x in red:
        if runs and x - runs[-1][1] <= 1.5:
            runs[-1][1] = x
        else:
            runs.append([x, x])
    # Where each band may be: from the boundary after the last epoch before the outage to the catch-up
    # epoch's bar, or the band's least width (6 px) around them, and a pixel or two of rounding.
    for o in outages:
        start_x, catch_up_x = x_of(o["before"] + 0.5), x_of(o["row"])
        o["allowed"] = (min(start_x, catch_up_x - 4) - 2, max(x_of(o["row"] + 0.5), catch_up_x + 4) + 2)
    stray = [r for r in runs if not any(o["allowed"][0] <= r[0] and r[1] <= o["allowed"][1] for o in outages)]
    check(not stray, "red bands atop the chart where no outage is: %r (the outages' places: %r)" % (
        stray, [o["allowed"] for o in outages]))
    for o in outages:
        since = len(problems)
        start_x = x_of(o["before"] + 0.5)  # the boundary after the last epoch before the outage
        catch_up_x = x_of(o["row"])
        band = next((r for r in runs if r[0] <= start_x + 1 and r[1] >= catch_up_x - 1), None)
        if not check(band is not None, "the outage ending at epoch %d (began %s, after epoch %s): no band spans x %.1f"
                     " to %.1f; the red bands are %r" % (numbers[o["row"]], o["stamp"],
                                                        numbers[o["before"]] if o["before"] >= 0 else "none",
                                                        start_x, catch_up_x, runs)):
            continue
        check(o["allowed"][0] <= band[0] and band[1] <= o["allowed"][1],
              "the outage ending at epoch %d: its band covers x %.1f to %.1f, beyond the epochs %.1f to %.1f" % (
                  numbers[o["row"]], band[0], band[1], start_x, x_of(o["row"] + 0.5)))
        middle = (band[0] + band[1]) / 2
        browser.call("Input.dispatchMouseEvent", type="mouseMoved", x=canvas["left"] + middle, y=canvas["top"] + 80,
                     button="none", clickCount=0)
        browser.settle()
        title = browser.evaluate("document.getElementById('epochs-canvas').title")
        page_state("outage-%d-hover" % numbers[o["row"]])
        want = printable(o["reason"])
        check(want in title, "hovering over the outage band at epoch %d: the tooltip %r does not name the reason %r" % (
            numbers[o["row"]], title, want))
        check(not has_hidden(title), "hovering over the outage band at epoch %d: the tooltip %r holds control"
              " characters or bidirectional overrides" % (numbers[o["row"]], title))
        check("epoch %s" % fmt(numbers[o["row"]]) in title and o["stamp"][:19] in title,
              "hovering over the outage band at epoch %d: the tooltip %r names neither the catch-up epoch nor the"
              " time %s" % (numbers[o["row"]], title, o["stamp"]))
        browser.call("Input.dispatchMouseEvent", type="mouseMoved", x=canvas["left"] + GUTTER / 2, y=canvas["top"] + 80,
                     button="none", clickCount=0)
        check(browser.evaluate("document.getElementById('epochs-canvas').title") == "",
              "away from the outage bands, the chart keeps the tooltip %r" % title)
        browser.click(canvas["left"] + middle, canvas["top"] + 80)
        page_state("outage-%d-clicked" % numbers[o["row"]])
        detail = browser.evaluate("document.getElementById('detail-body').textContent")
        headings = browser.evaluate("Array.from(document.querySelectorAll('#detail-body h3'), h => h.textContent)")
        check(headings and headings[0].startswith("Epoch %s " % fmt(numbers[o["row"]])) and "After an outage" in headings,
              "clicking the outage band at epoch %d: the details show %r" % (numbers[o["row"]], headings))
        check("(%s)" % want in detail, "clicking the outage band at epoch %d: the details do not name the reason %r" % (
            numbers[o["row"]], want))
        check(not has_hidden(detail.replace("\n", "")),
              "clicking the outage band at epoch %d: the details hold control characters or bidirectional overrides"
              % numbers[o["row"]])
        # The catch-up pass clears the store and writes every live object again: each path it wrote
        # has one event there, a change, and the details list none of them as removed.
        row = o["row"]
        doubled = [model.full[i] for i in sorted(set(model.changed_at(row))) if model.rows_of(i).count(row) > 1]
        check(not doubled, "the catch-up epoch %d has two events for %d paths (%s...)" % (
            numbers[row], len(doubled), ", ".join(doubled[:3])))
        written = {model.full[i] for i in model.changed_at(row)
                   if row * 2 in model.events[model.start[i]:model.start[i + 1]]}
        removed = browser.evaluate("Array.from(document.querySelectorAll('#detail-body .diff-del'), e => e.textContent)"
                                   ".filter(t => t.startsWith('- ')).map(t => t.slice(2).split('  ')[0])")
        wrongly = sorted({path for path in removed if path in written})
        check(not wrongly, "clicking the outage band at epoch %d: the details list %d paths the catch-up pass wrote as"
              " removed (%s...)" % (numbers[row], len(wrongly), ", ".join(wrongly[:3])))
        if len(problems) == since:
            print("%s: the outage before epoch %d (%s, %.1f s) has its band from x %.1f to %.1f (epochs %.1f to %.1f),"
                  " its tooltip and details name %s" % (
                      name, numbers[o["row"]], want, (times[o["row"]] - o["started"]) / 1000, band[0], band[1],
                      start_x, catch_up_x, want))


TERM_STRIP = (34, 40)  # as in timeline.js


def check_terms(browser, model, name, check, page_state, problems):
    """Step 6: the bands of the replication terms, their tooltips and the markers' details."""
    epochs = model.m["epochs"]
    numbers, counts = epochs["n"], epochs["c"]
    metadata = [epochs["metadata"][k] or {} for k in epochs["m"]]
    count = len(numbers)
    starts = [row for row, md in enumerate(metadata)
              if md.get("statejournal.event") == "replicaTermBegan" and counts[row] == 0]
    if not starts:
        raise Failure("the page's store has no marker epoch of a replication term's start")
    browser.evaluate("(() => { const c = document.getElementById('epochs-canvas'); c.scrollIntoView({block: 'center'}); return true; })()")
    browser.settle()
    canvas = browser.evaluate(
        "(() => { const c = document.getElementById('epochs-canvas'); const r = c.getBoundingClientRect();"
        " return {left: r.left, top: r.top, width: c.clientWidth}; })()")
    width = canvas["width"] - GUTTER - RIGHT
    x_of = lambda row: GUTTER + (row + 0.5) / count * width
    # The strip's colour along its middle row of pixels, column by column (teal: green and blue well above red).
    strip = browser.evaluate(
        "(() => { const c = document.getElementById('epochs-canvas'); const s = c.width / c.clientWidth;"
        " const d = c.getContext('2d').getImageData(0, Math.round(%d * s), c.width, 1).data; const out = [];"
        " for (let x = 0; x < c.clientWidth; x++) { const i = 4 * Math.round(x * s);"
        "   out.push(d[i + 1] - d[i] > 20 && d[i + 2] - d[i] > 20 ? d[i] : -1); }"
        " return out; })()" % ((TERM_STRIP[0] + TERM_STRIP[1]) // 2))
    for row in starts:
        since = len(problems)
        term, previous = metadata[row].get("statejournal.term"), metadata[row].get("statejournal.previousTerm")
        x = x_of(row)
        before, after = int(x_of(row - 1)), int(x_of(row) + 2)
        check(0 <= before < len(strip) and strip[before] >= 0 and 0 <= after < len(strip) and strip[after] >= 0,
              "term %s (marker epoch %d): the term strip is not drawn on both sides of x %.1f" % (term, numbers[row], x))
        if strip[before] >= 0 and strip[after] >= 0:
            check(strip[before] != strip[after], "term %s (marker epoch %d): the strip keeps one shade across the"
                  " term's start at x %.1f" % (term, numbers[row], x))
        browser.call("Input.dispatchMouseEvent", type="mouseMoved", x=canvas["left"] + x_of(row + 0.4),
                     y=canvas["top"] + (TERM_STRIP[0] + TERM_STRIP[1]) / 2, button="none", clickCount=0)
        browser.settle()
        title = browser.evaluate("document.getElementById('epochs-canvas').title")
        page_state("term-%s-hover" % term)
        check("Replication term %s began" % term in title, "hovering over term %s's strip: the tooltip is %r" % (
            term, title))
        continues = metadata[row].get("statejournal.continuesFrom")
        check(continues is None or "epochs through %s of term %s" % (continues, previous) in title,
              "hovering over term %s's strip: the tooltip %r does not say it continues from epoch %s of term %s" % (
                  term, title, continues, previous))
        browser.click(canvas["left"] + x, canvas["top"] + 80)
        page_state("term-%s-clicked" % term)
        headings = browser.evaluate("Array.from(document.querySelectorAll('#detail-body h3'), h => h.textContent)")
        detail = browser.evaluate("document.getElementById('detail-body').textContent")
        check(headings and headings[0].startswith("Epoch %s " % fmt(numbers[row])),
              "clicking term %s's marker: the details show %r" % (term, headings))
        check("Replication term %s began" % term in detail, "clicking term %s's marker: the details do not name the"
              " term's start" % term)
        if len(problems) == since:
            print("%s: term %s begins at marker epoch %d (after epoch %s of term %s): its band, tooltip and details"
                  " say so" % (name, term, numbers[row], continues, previous))


def main():
    chromium, page, artefacts, name = sys.argv[1:5]
    sys.stdout.reconfigure(line_buffering=True)  # in order with the messages of .ci/timeline-browser
    browser = Browser(chromium, os.path.join(artefacts, name + ".interaction.browser.log"))
    problems = []
    step = [0]

    def check(condition, message):
        if not condition:
            problems.append(message)
        return condition

    def page_state(what):
        step[0] += 1
        browser.screenshot(os.path.join(artefacts, "%s-%d-%s.png" % (name, step[0], what)))
        errors = browser.evaluate("document.body.dataset.errors")
        if errors != "0":
            raise Failure("after %s the page recorded %s errors: %s" % (
                what, errors, browser.evaluate("document.getElementById('errors').textContent")))

    def lanes():
        return browser.evaluate(
            "Array.from(document.querySelectorAll('#lanes-labels .lane'), l => ({node: Number(l.dataset.node),"
            " toggle: l.querySelector('.toggle').textContent, title: l.querySelector('.name').title,"
            " selected: l.classList.contains('selected')}))")

    def passed(since, summary):
        if len(problems) == since:
            print("%s: %s" % (name, summary))

    def detail_headings():
        return browser.evaluate("Array.from(document.querySelectorAll('#detail-body h3'), h => h.textContent)")

    try:
        browser.call("Page.navigate", url="file://" + os.path.abspath(page))
        deadline = time.monotonic() + 60
        while browser.evaluate("document.readyState === 'complete' && document.body.dataset.rendered === '1'") is not True:
            if browser.evaluate("document.body && document.body.dataset.errors") not in (None, "0"):
                break
            if time.monotonic() > deadline:
                raise Failure("the page did not render in 60 s")
            time.sleep(0.1)
        browser.settle()
        page_state("loaded")
        model = Model(browser.evaluate("JSON.parse(document.getElementById('timeline-model').textContent)"))
        if not model.epochs or not model.n:
            raise Failure("the page's store has no epoch or no path to interact with")

        outages_only = "--outages" in sys.argv[5:]
        if outages_only:
            check_outages(browser, model, name, check, page_state, problems)
        elif "--terms" in sys.argv[5:]:
            check_terms(browser, model, name, check, page_state, problems)
        else:
            # 1. An epoch's bar: the epoch where the most paths changed (the latest of those).
            since = len(problems)
            counts = [len(model.changed_at(row)) for row in range(len(model.epochs))]
            target = max(range(len(counts)), key=lambda row: (counts[row], row))
            canvas = browser.evaluate(
                "(() => { const c = document.getElementById('epochs-canvas'); c.scrollIntoView({block: 'center'});"
                " const r = c.getBoundingClientRect(); return {left: r.left, top: r.top, width: c.clientWidth}; })()")
            width = canvas["width"] - GUTTER - RIGHT
            x = int(round(canvas["left"] + GUTTER + (target + 0.5) / len(model.epochs) * width))
            # The row the page picks for that pixel (several epochs share a pixel on a long history).
            row = min(len(model.epochs) - 1, max(0, int(round((x - canvas["left"] - GUTTER) / width * len(model.epochs) - 0.5))))
            browser.click(x, canvas["top"] + 100)
            page_state("epoch-clicked")
            epoch = model.epochs[row]
            headings = detail_headings()
            check(headings and headings[0].startswith("Epoch %s " % fmt(epoch)),
                  "clicking epoch %d's bar: the details begin %r" % (epoch, headings[:1]))
            changed = len(model.changed_at(row))
            want = "Changes in this epoch (%s)" % fmt(changed) if changed else None
            check(want in headings if want else "This epoch changed no path." in browser.evaluate(
                "document.getElementById('detail-body').textContent"),
                "clicking epoch %d's bar: %s changed paths expected, the details show %r" % (epoch, changed, headings))
            check(browser.evaluate("location.hash") == "#epoch=%d" % epoch,
                  "clicking epoch %d's bar: the address is %r" % (epoch, browser.evaluate("location.hash")))
            passed(since, "clicking epoch %d's bar shows it and its %d changed paths" % (epoch, changed))

            # 2. The filter: the name of a path below the top level, matching few enough lanes to all be in view.
            since = len(problems)
            initial = lanes()
            needle, expected = None, None
            for i in sorted(range(model.n), key=lambda i: (model.parent[i] < 0, -len(model.full[i]))):
                rows = model.filtered(model.name[i])
                if 2 <= len(rows) <= 15:
                    needle, expected, leaf = model.name[i], rows, i
                    break
            if needle is None:
                raise Failure("no path whose name matches between 2 and 15 lanes to filter by")
            browser.click_element("#filter")
            browser.call("Input.insertText", text=needle)
            browser.settle()
            page_state("filtered")
            shown = lanes()
            check([lane["node"] for lane in shown] == expected,
                  "filtering by %r: the lanes are %r, not %r" % (needle, [lane["title"] for lane in shown],
                                                               [model.full[i] for i in expected]))
            check(all(lane["toggle"] == "" for lane in shown), "filtering by %r: lanes still show collapse toggles" % needle)
            browser.click_element('#lanes-labels .lane[data-node="%d"] .name' % leaf)
            page_state("filtered-path-clicked")
            headings = detail_headings()
            check(headings and headings[0] == model.full[leaf],
                  "clicking the filtered lane %s: the details begin %r" % (model.full[leaf], headings[:1]))
            check(browser.evaluate("decodeURIComponent(location.hash)").endswith("&path=" + model.full[leaf]),
                  "clicking the filtered lane %s: the address is %r" % (model.full[leaf], browser.evaluate("location.hash")))
            browser.evaluate("document.getElementById('filter').select(), true")
            browser.call("Input.dispatchKeyEvent", type="keyDown", key="Backspace", code="Backspace",
                         windowsVirtualKeyCode=8, nativeVirtualKeyCode=8)
            browser.call("Input.dispatchKeyEvent", type="keyUp", key="Backspace", code="Backspace",
                         windowsVirtualKeyCode=8, nativeVirtualKeyCode=8)
            browser.settle()
            page_state("filter-cleared")
            check(browser.evaluate("document.getElementById('filter').value") == "", "the filter could not be cleared")
            check([lane["node"] for lane in lanes()] == [lane["node"] for lane in initial],
                  "clearing the filter: the lanes are %r, not the %r of before" % (
                      [lane["title"] for lane in lanes()], [lane["title"] for lane in initial]))
            passed(since, "filtering by %r leaves %d lanes (the matches and their ancestors) and clearing it brings"
                   " back %d" % (needle, len(expected), len(initial)))

            # 3. Collapse the expanded subtree with the most lanes in view, then expand it again.
            since = len(problems)
            open_lanes = [lane for lane in initial if lane["toggle"] == "\u25be"]
            if not check(open_lanes, "no expanded subtree among the lanes to collapse"):
                raise Failure("; ".join(problems))
            node = max(open_lanes, key=lambda lane: sum(1 for l in initial if model.parent[l["node"]] == lane["node"]))["node"]
            inside = lambda i: node < i < model.end[node]
            browser.click_element('#lanes-labels .lane[data-node="%d"] .toggle' % node)
            page_state("collapsed")
            collapsed = lanes()
            kept = [lane["node"] for lane in initial if not inside(lane["node"])]
            check(not any(inside(lane["node"]) for lane in collapsed),
                  "collapsing %s: lanes of its subtree are still shown" % model.full[node])
            check([lane["node"] for lane in collapsed][:len(kept)] == kept,
                  "collapsing %s: the lanes are %r, not %r" % (
                      model.full[node], [lane["title"] for lane in collapsed], [model.full[i] for i in kept]))
            mine = [lane for lane in collapsed if lane["node"] == node]
            check(mine and mine[0]["toggle"] == "\u25b8", "collapsing %s: its toggle reads %r" % (
                model.full[node], mine[0]["toggle"] if mine else None))
            browser.click_element('#lanes-labels .lane[data-node="%d"] .name' % node)
            page_state("collapsed-clicked")
            subtree = range(node, model.end[node])
            last = max(r for i in subtree for r in model.rows_of(i)) if any(model.rows_of(i) for i in subtree) else None
            headings = detail_headings()
            if last is not None:
                under = len(model.changed_at(last, subtree))
                check(headings[:1] == [model.full[node]] and "Changes under this subtree (%s)" % fmt(under) in headings,
                      "clicking the collapsed %s: the details show %r, not its %d changes at epoch %d" % (
                          model.full[node], headings, under, model.epochs[last]))
                check(browser.evaluate("location.hash") == "#epoch=%d&path=%s" % (
                    model.epochs[last], browser.evaluate("encodeURIComponent(%s)" % json.dumps(model.full[node]))),
                    "clicking the collapsed %s: the address is %r" % (model.full[node], browser.evaluate("location.hash")))
            browser.click_element('#lanes-labels .lane[data-node="%d"] .toggle' % node)
            page_state("expanded")
            check([lane["node"] for lane in lanes()] == [lane["node"] for lane in initial],
                  "expanding %s again: the lanes are %r, not the %r of before" % (
                      model.full[node], [lane["title"] for lane in lanes()], [lane["title"] for lane in initial]))
            passed(since, "collapsing %s hides the %d lanes of its subtree in view, shows its changes at epoch %s, and"
                   " expanding it brings them back" % (model.full[node], len(initial) - len(kept),
                                                       model.epochs[last] if last is not None else "-"))

            # 4. Collapse all.
            since = len(problems)
            browser.click_element("#collapse-all")
            page_state("collapse-all")
            roots = model.roots()
            shown = [lane["node"] for lane in lanes()]
            # Every top-level path when they fit in the lanes' view (20 rows), else the first ones, filling it.
            check(shown == roots if len(roots) <= 20 else len(shown) >= 20 and shown == roots[:len(shown)],
                  "collapse all: the lanes are %r, not the top-level paths %r" % (
                      [model.full[i] for i in shown], [model.full[i] for i in roots[:20]]))
            check(all(lane["toggle"] in ("", "\u25b8") for lane in lanes()), "collapse all: a lane is still expanded")
            passed(since, "collapse all leaves the %d top-level paths" % len(roots))
            if any((md or {}).get("outageStarted") for md in model.m["epochs"]["metadata"]):
                check_outages(browser, model, name, check, page_state, problems)
    except Failure as failure:
        problems.append(str(failure))
    finally:
        browser.close()
    if problems:
        print("\n".join("%s: %s" % (name, p) for p in problems), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
