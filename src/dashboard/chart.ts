// The activity chart, drawn on the server as SVG: no script, nothing to load. Three bars per
// bucket (received, done, dead); the same numbers follow in a table for screen readers.
import { html } from 'hono/html';
import type { InboxActivityBucket } from '../inbox/store.ts';

const WIDTH = 720;
const HEIGHT = 170;
const LEFT = 44;
const BOTTOM = 22;
const TOP = 8;
const SERIES = [
  ['received', 'bar-received'],
  ['done', 'bar-done'],
  ['dead', 'bar-dead'],
] as const;

export function activityChart(options: { id: string; title: string; buckets: InboxActivityBucket[]; label: (start: number, index: number) => string | null }) {
  const { id, title, buckets, label } = options;
  const max = Math.max(1, ...buckets.flatMap((bucket) => [bucket.received, bucket.done, bucket.dead]));
  const plotWidth = WIDTH - LEFT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = plotWidth / buckets.length;
  const bar = Math.max(1, (slot - 2) / 3);
  const y = (value: number) => TOP + plotHeight - (value / max) * plotHeight;
  const totals = SERIES.map(([key]) => buckets.reduce((sum, bucket) => sum + bucket[key], 0));
  const description = `${totals[0]} received, ${totals[1]} done, ${totals[2]} dead in total; the busiest bucket holds ${max}.`;
  return html`<figure class="chart">
  <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${id}-title ${id}-desc" class="chart-svg">
    <title id="${id}-title">${title}</title>
    <desc id="${id}-desc">${description}</desc>
    <line x1="${LEFT}" y1="${TOP + plotHeight}" x2="${WIDTH}" y2="${TOP + plotHeight}" class="axis"></line>
    <line x1="${LEFT}" y1="${TOP}" x2="${WIDTH}" y2="${TOP}" class="grid"></line>
    <text x="${LEFT - 6}" y="${TOP + 10}" class="tick" text-anchor="end">${max}</text>
    <text x="${LEFT - 6}" y="${TOP + plotHeight}" class="tick" text-anchor="end">0</text>
    ${buckets.map((bucket, index) => {
      const x = LEFT + index * slot + 1;
      const text = label(bucket.start, index);
      return html`<g>${SERIES.map(([key, style], series) => {
        const value = bucket[key];
        return value > 0 ? html`<rect x="${(x + series * bar).toFixed(1)}" y="${y(value).toFixed(1)}" width="${bar.toFixed(1)}" height="${(TOP + plotHeight - y(value)).toFixed(1)}" class="${style}"></rect>` : '';
      })}${text === null ? '' : html`<text x="${(x + slot / 2).toFixed(1)}" y="${HEIGHT - 6}" class="tick" text-anchor="middle">${text}</text>`}</g>`;
    })}
  </svg>
  <figcaption>
    <span class="legend"><span class="swatch bar-received" aria-hidden="true"></span>received</span>
    <span class="legend"><span class="swatch bar-done" aria-hidden="true"></span>done</span>
    <span class="legend"><span class="swatch bar-dead" aria-hidden="true"></span>dead</span>
  </figcaption>
</figure>`;
}
