/**
 * The page's only script and stylesheet, served by bpa itself (/ui/app.js, /ui/app.css): the
 * bootstrap network has no internet, and the Content-Security-Policy allows nothing else.
 * There is no build step: the script is plain ES2017 that every current browser runs, small
 * enough to read here. It does three things: appends the installer's lines from the event
 * stream (as text, never as HTML), fetches the page again when the controller's state changes
 * and swaps its view in place, and says whether the live connection is up.
 */
export const APP_JS = String.raw`(function () {
  'use strict';
  var MAX_LINES = 2000;
  var conn = document.getElementById('conn');
  var timer = null;
  function say(text) { if (conn) conn.textContent = text; }
  function refresh() {
    if (timer) return;
    timer = setTimeout(function () {
      timer = null;
      fetch(location.pathname + location.search, { credentials: 'same-origin', headers: { 'x-bpa-view': '1' } })
        .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); return r.text(); })
        .then(function (text) {
          var next = new DOMParser().parseFromString(text, 'text/html').getElementById('view');
          var cur = document.getElementById('view');
          if (next && cur) cur.replaceWith(document.adoptNode(next));
        })
        .catch(function () { say('live updates: the page could not be refreshed'); });
    }, 200);
  }
  function append(line) {
    document.querySelectorAll('pre.log').forEach(function (pre) {
      var only = pre.getAttribute('data-cluster');
      if (only && only !== line.cluster) return;
      var atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 24;
      var row = document.createElement('span');
      row.className = 'line';
      var prefix = document.createElement('span');
      prefix.className = 'pfx';
      prefix.textContent = (line.cluster ? '[' + line.cluster + '] ' : '') + (line.node ? '[' + line.node + '] ' : '');
      row.appendChild(prefix);
      row.appendChild(document.createTextNode(line.text + '\n'));
      pre.appendChild(row);
      while (pre.childNodes.length > MAX_LINES) pre.removeChild(pre.firstChild);
      if (atEnd) pre.scrollTop = pre.scrollHeight;
    });
  }
  if (!window.EventSource) { say('live updates: not supported by this browser; reload to refresh'); return; }
  var events = new EventSource('/ui/events');
  events.addEventListener('open', function () { say('live updates: connected'); refresh(); });
  events.addEventListener('error', function () { say('live updates: reconnecting…'); });
  events.addEventListener('line', function (e) {
    var line;
    try { line = JSON.parse(e.data); } catch (err) { return; }
    append(line);
  });
  events.addEventListener('state', refresh);
})();
`;

export const APP_CSS = String.raw`:root { --fg: #1b1f24; --bg: #fff; --muted: #667; --line: #d8dee4; --head: #f3f5f7;
  --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --run: #0969da; color-scheme: light dark; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #8b949e; --line: #30363d; --head: #161b22;
  --ok: #3fb950; --bad: #f85149; --warn: #d29922; --run: #58a6ff; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; padding: .6rem 1rem; border-bottom: 1px solid var(--line); background: var(--head); }
header h1 { font-size: 1.1rem; margin: 0; }
header a { color: inherit; text-decoration: none; }
nav { display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
nav a[aria-current] { font-weight: 600; text-decoration: underline; }
#view, .live, footer { padding: 0 1rem; max-width: 1400px; margin: 0 auto; }
.controller { margin: .75rem 0; }
section { margin: 1rem 0 1.5rem; }
h2 { font-size: 1.05rem; margin: 0 0 .5rem; }
h3 { font-size: .95rem; margin: .75rem 0 .25rem; }
a { color: var(--run); }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid var(--line); }
th { font-weight: 600; background: var(--head); white-space: nowrap; }
td.msg, .msg { max-width: 40rem; overflow-wrap: anywhere; }
code { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.muted { color: var(--muted); }
.bad { color: var(--bad); }
.warn { color: var(--warn); }
.count { color: var(--muted); font-weight: 400; }
.name { font-weight: 600; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 1rem; font-size: 12px; font-weight: 600; border: 1px solid currentColor; white-space: nowrap; }
.b-ready, .b-yes, .b-applied, .b-unchanged, .b-done, .b-true, .b-idle, .b-reported, .b-skipped { color: var(--ok); }
.b-failed, .b-rejected, .b-no, .b-false { color: var(--bad); }
.b-degraded, .b-blocked, .b-pending, .b-interrupted, .b-standby { color: var(--warn); }
.b-provisioning, .b-reconciling, .b-running { color: var(--run); }
.pkgs span { display: inline-block; margin-right: .5rem; font: 12px ui-monospace, monospace; }
ol.actions, ul.notes, ul.problems, ul.ops, ul.runs { margin: .25rem 0; padding-left: 1.25rem; }
.filter { display: flex; flex-wrap: wrap; gap: .5rem; margin: .5rem 0; }
.filter input { flex: 1 1 12rem; padding: .3rem; }
pre.log { margin: 0; max-height: 28rem; min-height: 6rem; overflow: auto; padding: .5rem; background: var(--head); border: 1px solid var(--line);
  font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: pre-wrap; overflow-wrap: anywhere; }
pre.log .pfx { color: var(--run); }
footer { margin: 1rem auto 2rem; font-size: 12px; }
.logout { display: inline; margin-left: 1rem; }
.login { max-width: 24rem; margin: 3rem auto; padding: 0 1rem; }
.login input { width: 100%; padding: .4rem; margin: .5rem 0; }
@media (max-width: 640px) { body { font-size: 13px; } th, td { padding: .25rem .35rem; } .hide-narrow { display: none; } }
`;
