// The dashboard's one stylesheet, served from its own route so that the CSP allows no inline style.
// Colours keep a contrast of at least 4.5:1 on their backgrounds (WCAG AA); a narrow screen gets
// one column and tables that scroll sideways.
export const STYLESHEET = `
:root { color-scheme: light; --fg: #1a1a1a; --muted: #4a4a4a; --bg: #ffffff; --panel: #f4f5f7; --line: #c9ccd1;
  --link: #0b57d0; --ok: #146c2e; --warn: #8a4b00; --bad: #a4161a; --focus: #0b57d0; }
* { box-sizing: border-box; }
html { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
body { margin: 0; }
a { color: var(--link); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--bg); padding: .5rem; }
.skip:focus { left: .5rem; }
header.top { background: #1f2937; color: #fff; padding: .5rem 1rem; display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; }
header.top .brand { font-weight: 700; color: #fff; text-decoration: none; }
header.top nav ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
header.top nav a { color: #fff; text-decoration: none; padding: .25rem 0; display: inline-block; }
header.top nav a[aria-current="page"] { border-bottom: 3px solid #93c5fd; }
.mode { margin-left: auto; font-size: .875rem; color: #e5e7eb; }
form.sign-out { margin: 0; }
form.tenant-filter { margin: 0; display: flex; align-items: center; gap: .4rem; font-size: .875rem; }
form.tenant-filter input { min-height: 0; padding: .15rem .4rem; }
form.tenant-filter button { background: transparent; border-color: #e5e7eb; color: #fff; min-height: 0; padding: .15rem .6rem; font-size: .875rem; }
form.tenant-filter a { color: #fff; }
.tenant-key_invalid { color: var(--bad); font-weight: 700; }
.tenant-active { color: var(--ok); }
#tenants td:first-child { white-space: nowrap; }
form.sign-out button { background: transparent; border-color: #e5e7eb; color: #fff; min-height: 0; padding: .15rem .6rem; font-size: .875rem; }
.sign-in { max-width: 40rem; }
.run-ok { color: var(--ok); font-weight: 600; }
.run-warn { color: var(--warn); font-weight: 700; }
.run-failed { color: var(--bad); font-weight: 700; }
tr.run-row-warn > td:first-child { border-left: 4px solid var(--warn); }
tr.run-row-failed > td:first-child { border-left: 4px solid var(--bad); }
.order-list { overflow-wrap: anywhere; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .5rem; }
.attention { border: 2px solid var(--bad); background: #fdecec; padding: .75rem 1rem; border-radius: 6px; }
.attention.calm { border-color: var(--ok); background: #e8f5ec; }
.attention ul { margin: .25rem 0 0; padding-left: 1.25rem; }
.attention li + li { margin-top: .5rem; }
.flash { border: 2px solid var(--ok); background: #e8f5ec; padding: .5rem 1rem; border-radius: 6px; }
.error { border: 2px solid var(--bad); background: #fdecec; padding: .5rem 1rem; border-radius: 6px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(9rem, 1fr)); gap: .75rem; margin: 0; padding: 0; }
.cards > div { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; }
.cards dt { font-size: .875rem; color: var(--muted); }
.cards dd { margin: 0; font-size: 1.6rem; font-weight: 700; }
.cards dd a { text-decoration: none; }
.status-dead { color: var(--bad); font-weight: 700; }
.status-done { color: var(--ok); }
.status-pending, .status-processing { color: var(--warn); }
.missed { color: var(--bad); font-weight: 700; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.table-wrap { overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: .9375rem; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--panel); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.error-text { max-width: 28rem; overflow-wrap: anywhere; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .875rem; }
pre { background: var(--panel); border: 1px solid var(--line); padding: .75rem; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
form.filters { display: flex; flex-wrap: wrap; gap: .75rem; align-items: flex-end; margin-bottom: 1rem; }
form.filters label, form.inline label { display: flex; flex-direction: column; font-size: .875rem; color: var(--muted); }
input, select, button { font: inherit; padding: .35rem .5rem; border: 1px solid #767676; border-radius: 4px; background: #fff; color: var(--fg); min-height: 2.25rem; }
button, input[type="submit"] { background: #1f2937; color: #fff; border-color: #1f2937; cursor: pointer; }
button.danger { background: var(--bad); border-color: var(--bad); }
form.inline { display: inline-flex; flex-wrap: wrap; gap: .5rem; align-items: flex-end; margin: .25rem 0; }
.actions { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-end; }
.pager { display: flex; gap: 1rem; margin: .75rem 0; }
.muted { color: var(--muted); }
.chart { margin: 0 0 1rem; }
.chart-svg { width: 100%; height: auto; max-height: 16rem; background: var(--panel); border: 1px solid var(--line); border-radius: 6px; }
.chart .axis { stroke: #6b7280; stroke-width: 1; }
.chart .grid { stroke: #d1d5db; stroke-width: 1; stroke-dasharray: 4 4; }
.chart .tick { font-size: 11px; fill: #374151; }
.bar-received { fill: #1d4ed8; background: #1d4ed8; }
.bar-done { fill: #15803d; background: #15803d; }
.bar-dead { fill: #b91c1c; background: #b91c1c; }
.legend { display: inline-flex; align-items: center; gap: .35rem; margin-right: 1rem; font-size: .875rem; }
.swatch { display: inline-block; width: .9rem; height: .9rem; border-radius: 2px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.two { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
@media (max-width: 40rem) {
  main { padding: .75rem; }
  .two { grid-template-columns: 1fr; }
  .facts { grid-template-columns: 1fr; }
  .facts dd { margin-bottom: .5rem; }
  .mode { margin-left: 0; }
  .chart .tick { font-size: 22px; }
}
`;
