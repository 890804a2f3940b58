"""The support matrix as one self-contained HTML page, titled with the engine and its release: coloured
cells, a tooltip with each cell's reason (when it fails, what, where) and fix, a legend that says each state in
words, filters by algorithm and by state, a search box, and every column sortable (click its header: an
algorithm's column sorts worst first, then by name; again, the other way).

The matrix is in the page as JSON inside a ``<script type="application/json">``, which the HTML parser reads
as raw text up to the first ``</script`` and in which ``<!--`` opens an escaped state that can swallow that end
tag: a model file named ``y<!--<script>.py`` blanked the page. No ``<``, ``>`` or ``&`` is left in it (JSON's
``\\u003c`` and so on: the same strings to ``JSON.parse``).

Everything is inline (style, script, the matrix as JSON), and the page's content security policy lets it
load nothing: it opens from a file, in a browser, or in the editor's webview (the VS Code command
"spec-contract: Show support matrix"), the same everywhere and with no network.
"""

from __future__ import annotations

import html
import json
import secrets

from spec_contract.engine import Matrix
from spec_contract.report.matrix import matrix_data, title

_STYLE = """
:root { color-scheme: light dark; --ok: #2e7d32; --refused: #ef6c00; --crash: #c62828; --degraded: #9e9d24;
        --unknown: #607d8b; --not-its-draft: #9e9e9e; }
body { font: 13px/1.4 system-ui, sans-serif; margin: 1em 1.5em; }
h1 { font-size: 1.3em; margin: 0 0 .3em; }
.bar { display: flex; flex-wrap: wrap; gap: 1.2em; align-items: center; margin: .6em 0 1em; }
.bar fieldset { border: 1px solid #8885; border-radius: 4px; padding: .2em .6em; }
.bar label { margin-right: .6em; white-space: nowrap; }
#search { padding: .3em .5em; min-width: 18em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #8884; padding: .25em .6em; text-align: left; }
th { position: sticky; top: 0; background: Canvas; z-index: 1; }
th button { all: inherit; cursor: pointer; padding: 0; border: 0; position: static; }
th[aria-sort=ascending] button::after { content: " ▲"; } th[aria-sort=descending] button::after { content: " ▼"; }
td.cell { position: relative; color: #fff; font-weight: 600; text-align: center; min-width: 7em; }
td.supported { background: var(--ok); } td.refused { background: var(--refused); }
td.crashes { background: var(--crash); } td.degraded { background: var(--degraded); }
td.cannot-tell { background: var(--unknown); } td.not-its-draft { background: var(--not-its-draft); }
td.cell .tip { display: none; position: absolute; z-index: 2; left: 50%; top: 100%; width: 28em;
               transform: translateX(-50%); background: #222; color: #eee; font-weight: 400; text-align: left;
               padding: .5em .7em; border-radius: 4px; box-shadow: 0 2px 8px #0008; overflow-wrap: anywhere; }
td.cell:hover .tip, td.cell:focus .tip, td.cell.pinned .tip { display: block; }
td.cell:last-child .tip { left: auto; right: 0; transform: none; }  /* the last column's stays on the page */
.tip b { color: #fff; } .muted { opacity: .7; } code { font-size: .95em; } .tip code { color: #ffd54f; }
.legend { margin: 0 0 1em; padding: 0; list-style: none; }
.legend li { margin: .15em 0; }
.legend span { display: inline-block; color: #fff; padding: 0 .5em; margin-right: .5em; border-radius: 3px;
               min-width: 6.5em; text-align: center; }
"""

_SCRIPT = """
const data = JSON.parse(document.getElementById('matrix-data').textContent);
const table = document.getElementById('matrix');
const search = document.getElementById('search');
const shown = document.getElementById('shown');
function esc(s) { return String(s).replace(/[&<>"]/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'})[c]); }
function prose(s) { return esc(s).replace(/`([^`]+)`/g, '<code>$1</code>'); }
const RANK = Object.fromEntries(data.states.map((s, i) => [s, i]));
let sortColumn = null, sortDirection = 1;  // none yet: the rows in the engine's order (targets, then drafts, by name)
function sortKey(row, column) {
  if (column === 'architecture' || column === 'class' || column === 'role') return String(row[column]).toLowerCase();
  return RANK[row.cells[column].state];  // an algorithm: worst state first
}
function compare(a, b) {
  const x = sortKey(a, sortColumn), y = sortKey(b, sortColumn);
  const order = x < y ? -1 : x > y ? 1 : 0;
  return sortDirection * order || a.architecture.toLowerCase().localeCompare(b.architecture.toLowerCase());
}
function header(column) {
  const sorted = column === sortColumn ? (sortDirection > 0 ? 'ascending' : 'descending') : 'none';
  return '<th data-column="' + esc(column) + '" aria-sort="' + sorted + '"><button type="button" title="sort by ' +
    esc(column) + '">' + esc(column) + '</button></th>';
}
function checked(name) { return new Set([...document.querySelectorAll('input[name=' + name + ']:checked')].map(i => i.value)); }
function render() {
  const algs = data.algorithms.filter(a => checked('algorithm').has(a));
  const states = checked('state');
  const words = search.value.trim().toLowerCase();
  let head = '<tr>' + ['architecture', 'class', 'role'].concat(algs).map(header).join('') + '</tr>';
  let rows = [], count = 0;
  const ordered = sortColumn === null ? data.rows : data.rows.slice().sort(compare);
  for (const row of ordered) {
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
// a link may carry the view: #search=kimi&algorithm=EAGLE3,DFLASH&state=crashes&sort=-EAGLE3&pin=Arch/EAGLE3
const wanted = new URLSearchParams(location.hash.slice(1));
if (wanted.has('search')) search.value = wanted.get('search');
if (wanted.has('sort')) {
  const column = wanted.get('sort').replace(/^-/, '');
  if (['architecture', 'class', 'role'].concat(data.algorithms).includes(column)) {
    sortColumn = column;
    sortDirection = wanted.get('sort').startsWith('-') ? -1 : 1;
  }
}
for (const name of ['algorithm', 'state']) {
  if (!wanted.has(name)) continue;
  const keep = new Set(wanted.get(name).split(','));
  document.querySelectorAll('input[name=' + name + ']').forEach(i => { i.checked = keep.has(i.value); });
}
document.querySelectorAll('input').forEach(i => i.addEventListener('input', render));
table.addEventListener('click', e => {
  const th = e.target.closest('th[data-column]');
  if (th) {
    const column = th.dataset.column;
    sortDirection = column === sortColumn ? -sortDirection : 1;
    sortColumn = column;
    render();
    return;
  }
  const td = e.target.closest('td.cell');
  if (td) td.classList.toggle('pinned');
});
render();
if (wanted.has('pin')) {
  const [arch, alg] = wanted.get('pin').split('/');
  const row = [...table.querySelectorAll('tbody tr')].find(r => r.dataset.architecture === arch);
  const cell = row && row.querySelector('td.cell[data-algorithm="' + alg + '"]');
  if (cell) cell.classList.add('pinned');
}
"""


def render_html(matrix: Matrix) -> str:
    """The page. Its policy lets only the script carrying this page's fresh nonce run: a script anything else
    put in the page would not (the editor's webview runs scripts)."""
    nonce = secrets.token_urlsafe(18)
    data = matrix_data(matrix)
    # nothing the HTML parser reads as markup inside the script element (see the module docstring)
    payload = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    legend_words: dict[str, str] = data["legend"]  # type: ignore[assignment]
    algorithm_boxes = "".join(f'<label><input type="checkbox" name="algorithm" value="{html.escape(a)}" checked> '
                              f'{html.escape(a)}</label>' for a in matrix.algorithms)
    state_boxes = "".join(f'<label><input type="checkbox" name="state" value="{s}" checked> {s}</label>'
                          for s in legend_words)
    legend = "".join(f'<li><span class="{s}" style="background: var(--{_colour(s)})">{s}</span> {html.escape(words)}</li>'
                     for s, words in legend_words.items())
    left_out = f""" · {len(matrix.left_out)} architectures left out: their class never generates (embedding,
classification, reward models), so no run makes it its target or its draft""" if matrix.left_out else ""
    heading = html.escape(title(matrix))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="generator" content="spec-contract matrix">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-{nonce}'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{heading}</title><style>{_STYLE}</style></head>
<body>
<h1>{heading}</h1>
<div class="muted">{html.escape(matrix.root)} · {len(matrix.rows)} architectures × {len(matrix.algorithms)} algorithms{left_out} ·
hover a cell for the reason and the fix (click pins it); click a column's header to sort by it; the view can be linked:
<code>#search=…&amp;algorithm=EAGLE3&amp;state=crashes&amp;sort=-EAGLE3&amp;pin=Arch/EAGLE3</code></div>
<div class="bar">
<input id="search" type="search" placeholder="search architectures and classes" aria-label="search">
<fieldset><legend>algorithm</legend>{algorithm_boxes}</fieldset>
<fieldset><legend>state</legend>{state_boxes}</fieldset>
<span id="shown"></span>
</div>
<ul class="legend">{legend}</ul>
<table id="matrix"></table>
<script type="application/json" id="matrix-data">{payload}</script>
<script nonce="{nonce}">{_SCRIPT}</script>
</body></html>"""


def _colour(state: str) -> str:
    return {"supported": "ok", "crashes": "crash", "cannot-tell": "unknown"}.get(state, state)
