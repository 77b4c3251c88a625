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
  window.addEventListener('error', function (ev) {
    note((ev.message || 'error') + ' at ' + (ev.filename || '') + ':' + (ev.lineno || 0));
  });
  window.addEventListener('unhandledrejection', function (ev) { note('unhandled rejection: ' + ev.reason); });
  var consoleError = console.error;
  console.error = function () { note(Array.prototype.join.call(arguments, ' ')); consoleError.apply(console, arguments); };
  window.__timelineErrors = errors;
})();
