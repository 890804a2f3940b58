"""The support matrix as one self-contained HTML page: coloured cells, a tooltip with each cell's reason
and fix, filters by algorithm and by state, and a search box.

Everything is inline (style, script, the matrix as JSON), and the page's content security policy lets it
load nothing: it opens from a file, in a browser, or in the editor's webview (the VS Code command
"spec-contract: Show support matrix"), the same everywhere and with no network.

The matrix is in the page as JSON inside a ``<script type="application/json">``, which the HTML parser reads
as raw text up to the first ``</script`` and in which ``<!--`` opens an escaped state that can swallow that end
tag: a model file named ``y<!--<script>.py`` blanked the page. No ``<``, ``>`` or ``&`` is left in it (JSON's
``\\u003c`` and so on: the same strings to ``JSON.parse``).
"""

from __future__ import annotations

import html
import json

from spec_contract.engine import Matrix
from spec_contract.report.matrix import matrix_data, title

_STYLE = """
:root { color-scheme: light dark; --ok: #2e7d32; --refused: #ef6c00; --crash: #c62828; --degraded: #9e9d24;
        --unknown: #607d8b; }
body { font: 13px/1.4 system-ui, sans-serif; margin: 1em 1.5em; }
h1 { font-size: 1.3em; margin: 0 0 .3em; }
.bar { display: flex; flex-wrap: wrap; gap: 1.2em; align-items: center; margin: .6em 0 1em; }
.bar fieldset { border: 1px solid #8885; border-radius: 4px; padding: .2em .6em; }
.bar label { margin-right: .6em; white-space: nowrap; }
#search { padding: .3em .5em; min-width: 18em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #8884; padding: .25em .6em; text-align: left; }
th { position: sticky; top: 0; background: Canvas; }
td.cell { position: relative; color: #fff; font-weight: 600; text-align: center; min-width: 7em; }
td.supported { background: var(--ok); } td.refused { background: var(--refused); }
td.crashes { background: var(--crash); } td.degraded { background: var(--degraded); }
td.cannot-tell { background: var(--unknown); }
td.cell .tip { display: none; position: absolute; z-index: 2; left: 50%; top: 100%; width: 28em;
               transform: translateX(-50%); background: #222; color: #eee; font-weight: 400; text-align: left;
               padding: .5em .7em; border-radius: 4px; box-shadow: 0 2px 8px #0008; overflow-wrap: anywhere; }
td.cell:hover .tip, td.cell:focus .tip, td.cell.pinned .tip { display: block; }
.tip b { color: #fff; } .muted { opacity: .7; } code { font-size: .95em; } .tip code { color: #ffd54f; }
.legend span { display: inline-block; color: #fff; padding: 0 .5em; margin-right: .3em; border-radius: 3px; }
"""

_SCRIPT = """
const data = JSON.parse(document.getElementById('matrix-data').textContent);
const table = document.getElementById('matrix');
const search = document.getElementById('search');
const shown = document.getElementById('shown');
function esc(s) { return String(s).replace(/[&<>"]/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'})[c]); }
function prose(s) { return esc(s).replace(/`([^`]+)`/g, '<code>$1</code>'); }
function checked(name) { return new Set([...document.querySelectorAll('input[name=' + name + ']:checked')].map(i => i.value)); }
function render() {
  const algs = data.algorithms.filter(a => checked('algorithm').has(a));
  const states = checked('state');
  const words = search.value.trim().toLowerCase();
  let head = '<tr><th>architecture</th><th>class</th><th>role</th>' + algs.map(a => '<th>' + esc(a) + '</th>').join('') + '</tr>';
  let rows = [], count = 0;
  for (const row of data.rows) {
    if (words && !(row.architecture + ' ' + row.class + ' ' + row.path).toLowerCase().includes(words)) continue;
    if (!algs.some(a => states.has(row.cells[a].state))) continue;
    count++;
    let tds = algs.map(a => {
      const c = row.cells[a];
      const tip = '<b>' + esc(row.architecture) + ' × ' + esc(a) + ': ' + esc(c.state) + '</b>' +
        (c.why ? '<br>' + prose(c.why) : '') + (c.fix ? '<br><b>fix:</b> ' + prose(c.fix) : '') +
        (row.notes.length || c.notes.length ? '<br><span class="muted">' + row.notes.concat(c.notes).map(prose).join('<br>') +
          '</span>' : '');
      const dim = states.has(c.state) ? '' : ' style="opacity:.25"';
      return '<td class="cell ' + esc(c.state) + '" tabindex="0" data-state="' + esc(c.state) + '" data-algorithm="' +
        esc(a) + '"' + dim + '>' +
        esc(c.state) + '<div class="tip" role="tooltip">' + tip + '</div></td>';
    }).join('');
    rows.push('<tr data-architecture="' + esc(row.architecture) + '"><td>' + esc(row.architecture) + '</td><td><code>' + esc(row.class) +
      '</code> <span class="muted">' + esc(row.path) + ':' + row.line + '</span></td><td>' + esc(row.role) + '</td>' + tds + '</tr>');
  }
  table.innerHTML = '<thead>' + head + '</thead><tbody>' + rows.join('') + '</tbody>';
  shown.textContent = count + ' of ' + data.rows.length + ' architectures';
}
// a link may carry the view: #search=kimi&algorithm=EAGLE3,DFLASH&state=crashes&pin=Arch/EAGLE3
const wanted = new URLSearchParams(location.hash.slice(1));
if (wanted.has('search')) search.value = wanted.get('search');
for (const name of ['algorithm', 'state']) {
  if (!wanted.has(name)) continue;
  const keep = new Set(wanted.get(name).split(','));
  document.querySelectorAll('input[name=' + name + ']').forEach(i => { i.checked = keep.has(i.value); });
}
document.querySelectorAll('input').forEach(i => i.addEventListener('input', render));
table.addEventListener('click', e => { const td = e.target.closest('td.cell'); if (td) td.classList.toggle('pinned'); });
render();
if (wanted.has('pin')) {
  const [arch, alg] = wanted.get('pin').split('/');
  const row = [...table.querySelectorAll('tbody tr')].find(r => r.dataset.architecture === arch);
  const cell = row && row.querySelector('td.cell[data-algorithm="' + alg + '"]');
  if (cell) cell.classList.add('pinned');
}
"""


def render_html(matrix: Matrix) -> str:
    data = matrix_data(matrix)
    # nothing the HTML parser reads as markup inside the script element (see the module docstring)
    payload = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    states = [str(s) for s in data["states"]]  # type: ignore[attr-defined]
    algorithm_boxes = "".join(f'<label><input type="checkbox" name="algorithm" value="{html.escape(a)}" checked> '
                              f'{html.escape(a)}</label>' for a in matrix.algorithms)
    state_boxes = "".join(f'<label><input type="checkbox" name="state" value="{s}" checked> {s}</label>' for s in states)
    legend = "".join(f'<span class="{s}" style="background: var(--{_colour(s)})">{s}</span>' for s in states)
    heading = html.escape(title(matrix))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="generator" content="spec-contract matrix">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{heading}</title><style>{_STYLE}</style></head>
<body>
<h1>{heading}</h1>
<div class="muted">{html.escape(matrix.root)} · {len(matrix.rows)} architectures × {len(matrix.algorithms)} algorithms ·
hover a cell for the reason and the fix (click pins it); the view can be linked:
<code>#search=…&amp;algorithm=EAGLE3&amp;state=crashes&amp;pin=Arch/EAGLE3</code></div>
<div class="bar">
<input id="search" type="search" placeholder="search architectures and classes" aria-label="search">
<fieldset><legend>algorithm</legend>{algorithm_boxes}</fieldset>
<fieldset><legend>state</legend>{state_boxes}</fieldset>
<span id="shown"></span>
</div>
<div class="legend">{legend}</div>
<table id="matrix"></table>
<script type="application/json" id="matrix-data">{payload}</script>
<script>{_SCRIPT}</script>
</body></html>"""


def _colour(state: str) -> str:
    return {"supported": "ok", "crashes": "crash", "cannot-tell": "unknown"}.get(state, state)
