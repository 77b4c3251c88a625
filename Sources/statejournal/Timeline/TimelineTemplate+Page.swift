/// The HTML, CSS and JavaScript of the timeline page, as strings: the page loads nothing from
/// anywhere.
enum TimelineTemplate {
    /// Installed first, in the head: counts every error and `console.error` into
    /// `<body data-errors>` and lists them in `#errors`, so that a headless browser's DOM dump shows
    /// them.
    static let errorTrap = #"""
        (function () {
          var errors = [];
          function note(message) {
            errors.push(String(message));
            var apply = function () {
              document.body.setAttribute('data-errors', String(errors.length));
              var list = document.getElementById('errors');
              if (list) { list.hidden = false; list.textContent = errors.join('\n'); }
            };
            if (document.body) apply(); else document.addEventListener('DOMContentLoaded', apply);
          }
          window.addEventListener('error', function (event) {
            note((event.message || 'error') + ' at ' + (event.filename || '') + ':' + (event.lineno || 0));
          });
          window.addEventListener('unhandledrejection', function (event) { note('unhandled rejection: ' + event.reason); });
          var consoleError = console.error;
          console.error = function () { note(Array.prototype.join.call(arguments, ' ')); consoleError.apply(console, arguments); };
          window.__timelineErrors = errors;
        })();
        """#

    /// The page's body before the data and the script.
    static let body = #"""
        <header>
          <div>
            <h1>StateJournal timeline</h1>
            <div class="store" id="store-path"></div>
          </div>
          <dl class="stats">
            <div><dt>Epochs</dt><dd id="stat-epochs">–</dd></div>
            <div><dt>Latest epoch</dt><dd id="stat-latest">–</dd></div>
            <div><dt>Bytes written</dt><dd id="stat-bytes">–</dd></div>
            <div><dt>Store on disk</dt><dd id="stat-disk">–</dd></div>
            <div><dt>Live objects</dt><dd id="stat-objects">–</dd></div>
            <div><dt>Paths</dt><dd id="stat-paths">–</dd></div>
            <div><dt>Launches</dt><dd id="stat-launches">–</dd></div>
            <div><dt>Rendered in</dt><dd id="stat-load">–</dd></div>
          </dl>
        </header>
        <section id="legend" aria-label="Legend"></section>
        <main>
          <div id="plots">
            <div class="panel">
              <div class="panel-title">Epochs <span class="hint">bar height: bytes written (log scale) · bands: launches · scroll to zoom, drag to pan, click for details</span><span class="spacer"></span><button id="reset-zoom" type="button">Show all</button></div>
              <canvas id="epochs-canvas"></canvas>
            </div>
            <div class="panel">
              <div class="panel-title">Store size <span class="hint">journal bytes of the retained epochs, accumulated · ◆ compaction (checkpoint)</span></div>
              <canvas id="size-canvas"></canvas>
            </div>
            <div class="panel">
              <div class="panel-title">Restoration paths <span class="hint">● changed · ✕ removed · ▮ changes inside a collapsed subtree</span><span class="spacer"></span><input type="search" id="filter" placeholder="Filter paths…" aria-label="Filter paths"><button id="collapse-all" type="button">Collapse all</button></div>
              <div id="lanes"><div id="lanes-view"><canvas id="lanes-canvas"></canvas><div id="lanes-labels"></div></div><div id="lanes-spacer"></div></div>
            </div>
          </div>
          <aside><div class="panel"><div class="panel-title">Details</div><div id="detail-body"><p class="muted">Click an epoch bar, a dot in a lane or a launch band to see the state and what changed.</p></div></div></aside>
        </main>
        <section id="launches"><h2>Launches and their restoration reports</h2><div id="launch-list"></div></section>
        <footer id="footer"></footer>
        <pre id="errors" hidden></pre>
        """#
}
