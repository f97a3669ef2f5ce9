"""The report's stylesheet and script, inlined into every report (it must open without a network).

The script is allowed by the report's Content-Security-Policy through its SHA-256 hash, so it must stay a constant:
nothing from a plan is ever formatted into it. It reads the report's JSON data (preview documents, inlined images,
the preview frame's head) and:

* creates each preview frame (``sandbox=""``, ``srcdoc``) only when its placeholder comes near the viewport, and
  inserts a collapsed section's body (report markup from the data) the first time it is opened, so a 1,000-page
  report opens about as fast as a short one; printing opens every section and creates every frame first;
* opens the section a link or the keyboard goes to (``j``/``k`` next/previous section, ``/`` the filter);
* filters the objects list and the sections by kind, key and operation.

Without JavaScript a short report (every section inline) shows everything, each preview pane holding the block's
text (a static fallback the script replaces with the rendered frame); a long one shows its summary and list of
objects.
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
:root{color-scheme:light dark;--bg:#fff;--fg:#1d1f21;--muted:#5f6368;--line:#d8dadd;--panel:#f6f7f8;
--ins:#dff5e1;--ins-fg:#0b5d1e;--del:#fde2e1;--del-fg:#8d1b13;--add:#1a7f37;--upd:#9a6700;--rem:#cf222e;
--mov:#0969da;--focus:#0969da;--warn:#fff4d6}
@media (prefers-color-scheme:dark){:root{--bg:#16181b;--fg:#e6e7e9;--muted:#a0a4aa;--line:#34383d;--panel:#1f2226;
--ins:#15391f;--ins-fg:#9be2ad;--del:#45191a;--del-fg:#ffb4ae;--add:#4ac26b;--upd:#d4a72c;--rem:#ff7b72;
--mov:#58a6ff;--focus:#58a6ff;--warn:#3b2e0a}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
a{color:var(--mov)}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:var(--bg);padding:4px 8px;z-index:9}
header,main{max-width:1280px;margin:0 auto;padding:0 20px}
header{padding-top:18px}
h1{font-size:1.45rem;margin:0 0 4px}h2{font-size:1.15rem;margin:26px 0 8px;border-bottom:1px solid var(--line)}
h4{font-size:.95rem;margin:0 0 6px;font-weight:600}
.meta,.muted{color:var(--muted);font-size:.88rem}.meta span{margin-right:14px}
.verdict{font-weight:600;font-size:1.05rem}
table{border-collapse:collapse}th,td{padding:3px 10px;border:1px solid var(--line);text-align:left;vertical-align:top}
table.counts td{text-align:right;font-variant-numeric:tabular-nums}table.counts td.zero{color:var(--muted)}
.warnings li,.blocked li{margin:4px 0}.blocked,.warnings{background:var(--warn);padding:8px 12px 8px 28px;
border-radius:6px}
.toolbar{display:flex;gap:8px;align-items:center;flex-wrap:wrap;margin:8px 0}
.toolbar input{font:inherit;padding:4px 8px;min-width:260px;background:var(--bg);color:var(--fg);
border:1px solid var(--line);border-radius:4px}
button{font:inherit;padding:3px 10px;background:var(--panel);color:var(--fg);border:1px solid var(--line);
border-radius:4px;cursor:pointer}
#objects{max-height:45vh;overflow:auto;border:1px solid var(--line);border-radius:6px}
#objects table{width:100%;border:0}#objects th,#objects td{border-width:0 0 1px 0}
#objects thead th{position:sticky;top:0;background:var(--panel)}
.sym{font-family:ui-monospace,monospace;font-weight:700}
.op-create .sym,.bop-add .sym,tr.op-create .sym{color:var(--add)}
.op-update .sym,.op-publish .sym,.op-replace .sym,.bop-update .sym,tr.op-update .sym{color:var(--upd)}
.op-delete .sym,.bop-delete .sym,tr.op-delete .sym{color:var(--rem)}.op-move .sym{color:var(--mov)}
details.action{border:1px solid var(--line);border-radius:6px;margin:10px 0;background:var(--bg);
content-visibility:auto;contain-intrinsic-size:auto 48px}
details.action>summary{padding:8px 12px;cursor:pointer;background:var(--panel);border-radius:6px}
details.action[open]>summary{border-bottom:1px solid var(--line);border-radius:6px 6px 0 0}
summary .kind,summary .op{color:var(--muted)}summary .brief{color:var(--muted);margin-left:10px;font-size:.88rem}
.body{padding:10px 14px}
.drift{color:var(--rem);font-weight:600}.note{color:var(--muted);font-style:italic}.deps{color:var(--muted);font-size:.85rem}
table.fields{width:100%;margin:6px 0 10px;table-layout:fixed}table.fields th{width:16%;font-weight:normal}
table.fields td,table.fields th,td code,.bfield{overflow-wrap:anywhere;word-break:break-word}
td.old{background:var(--del);color:var(--del-fg)}td.new{background:var(--ins);color:var(--ins-fg)}
.absent{color:var(--muted);font-style:italic}
section.block{border-top:1px dashed var(--line);padding:10px 0 4px}
.bfield{margin:4px 0}.fname .tally{color:var(--muted);font-size:.82rem;margin-left:6px}
.wdiff{white-space:pre-wrap;background:var(--panel);border:1px solid var(--line);border-radius:4px;padding:6px 10px;
margin:4px 0;overflow-wrap:anywhere}
ins{background:var(--ins);color:var(--ins-fg);text-decoration:none;border-radius:2px}
del{background:var(--del);color:var(--del-fg);text-decoration:line-through;border-radius:2px}
.tag{font-family:ui-monospace,monospace;font-size:.8em;opacity:.85}.cut{color:var(--muted)}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:12px;margin:8px 0}
@media (max-width:800px){.pair{grid-template-columns:1fr}}
figure{margin:0}figcaption{font-size:.8rem;color:var(--muted);margin-bottom:3px}
.pv{min-height:70px;resize:vertical;overflow:hidden;border:1px solid var(--line);border-radius:4px;background:#fff}
.pv iframe{display:block;width:100%;height:100%;border:0;background:#fff}
.pv-text{padding:6px 10px;color:#1d1f21;white-space:pre-wrap;overflow-wrap:anywhere;font-size:.9rem}
.pv-none{min-height:70px;border:1px dashed var(--line);border-radius:4px;display:flex;align-items:center;
justify-content:center;color:var(--muted)}
img.thumb{max-width:240px;max-height:160px;border:1px solid var(--line);background:#fff}
.hidden{display:none!important}
footer{max-width:1280px;margin:30px auto;padding:0 20px;color:var(--muted);font-size:.85rem}
@media print{
:root{--bg:#fff;--fg:#000;--panel:#f4f4f4}
.toolbar,.skip,#objects-wrap,.keys{display:none}
details.action{break-inside:avoid-page;content-visibility:visible}
details.action>summary{list-style:none}
.pv{resize:none;break-inside:avoid}
a{color:inherit;text-decoration:none}
}
"""

SCRIPT = r"""
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var own = Object.prototype.hasOwnProperty;
  var FILE_REF = /\$\{file:([^{}]*)\}/g;
  function image(path) { return own.call(data.images, path) ? data.images[path] : data.missing; }
  function materialize(el) {
    if (el.querySelector('iframe')) { return; }
    var text = el.querySelector('.pv-text');
    if (text) { el.removeChild(text); }
    var frame = document.createElement('iframe');
    frame.setAttribute('sandbox', '');
    frame.setAttribute('referrerpolicy', 'no-referrer');
    frame.setAttribute('tabindex', '-1');
    frame.title = 'preview: ' + el.getAttribute('data-title');
    el.style.height = el.getAttribute('data-h') + 'px';
    frame.srcdoc = data.head + data.docs[+el.getAttribute('data-doc')].replace(FILE_REF, function (m, p) {
      return image(p);
    });
    el.appendChild(frame);
  }
  var observer = 'IntersectionObserver' in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) { observer.unobserve(entry.target); materialize(entry.target); }
    });
  }, {rootMargin: '600px 0px'}) : null;
  function watch(root) {
    root.querySelectorAll('.pv').forEach(function (el) {
      if (observer) { observer.observe(el); } else { materialize(el); }
    });
    root.querySelectorAll('img[data-file]').forEach(function (img) { img.src = image(img.getAttribute('data-file')); });
  }
  function fill(section) {
    var body = section.getAttribute('data-body');
    if (body === null) { return; }
    section.removeAttribute('data-body');
    section.insertAdjacentHTML('beforeend', data.bodies[+body]);
    watch(section);
  }
  watch(document);
  var sections = Array.prototype.slice.call(document.querySelectorAll('details.action'));
  document.addEventListener('toggle', function (event) {
    if (event.target.open && event.target.classList.contains('action')) { fill(event.target); }
  }, true);
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (target && target.tagName === 'DETAILS') { fill(target); target.open = true; }
  }
  window.addEventListener('hashchange', openTarget);
  openTarget();
  function go(step) {
    var visible = sections.filter(function (s) { return !s.classList.contains('hidden'); });
    if (!visible.length) { return; }
    var index = -1;
    visible.forEach(function (s, i) { if (s.getBoundingClientRect().top <= 10) { index = i; } });
    var next = visible[Math.max(0, Math.min(visible.length - 1, index + step))];
    fill(next);
    next.open = true;
    next.scrollIntoView({block: 'start'});
    next.querySelector('summary').focus({preventScroll: true});
  }
  var filter = document.getElementById('filter');
  var rows = Array.prototype.slice.call(document.querySelectorAll('#objects tbody tr'));
  function applyFilter() {
    var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    function shown(text) { return words.every(function (w) { return text.indexOf(w) >= 0; }); }
    rows.forEach(function (r) { r.classList.toggle('hidden', !shown(r.getAttribute('data-key'))); });
    sections.forEach(function (s) { s.classList.toggle('hidden', !shown(s.getAttribute('data-key'))); });
    var count = sections.filter(function (s) { return !s.classList.contains('hidden'); }).length;
    document.getElementById('shown').textContent = count + ' of ' + sections.length + ' shown';
  }
  if (filter) { filter.addEventListener('input', applyFilter); }
  function setAll(open) { sections.forEach(function (s) { if (open) { fill(s); } s.open = open; }); }
  var expand = document.getElementById('expand'), collapse = document.getElementById('collapse');
  if (expand) { expand.addEventListener('click', function () { setAll(true); }); }
  if (collapse) { collapse.addEventListener('click', function () { setAll(false); }); }
  document.addEventListener('keydown', function (event) {
    var t = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (t && /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)) { return; }
    if (event.key === 'j') { go(1); event.preventDefault(); }
    else if (event.key === 'k') { go(-1); event.preventDefault(); }
    else if (event.key === '/' && filter) { filter.focus(); event.preventDefault(); }
  });
  var closed = [];
  window.addEventListener('beforeprint', function () {
    closed = sections.filter(function (s) { return !s.open; });
    setAll(true);
    document.querySelectorAll('.pv').forEach(materialize);
  });
  window.addEventListener('afterprint', function () { closed.forEach(function (s) { s.open = false; }); });
  document.documentElement.setAttribute('data-ready', '1');
})();
"""


def script_hash() -> str:
    """The CSP source that allows exactly :data:`SCRIPT`."""
    digest = hashlib.sha256(SCRIPT.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")
