// Summaries of repeated measurements. The median is the figure (robust to one slow run on a shared
// machine); min/max and the relative spread are kept so a reader can judge how much to trust it.

export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
  /** (max - min) / median, in percent. */
  spreadPct: number;
  values: number[];
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function summarize(values: readonly number[]): Summary {
  const med = median(values);
  const min = Math.min(...values);
  const max = Math.max(...values);
  return { median: med, min, max, n: values.length, spreadPct: med === 0 ? 0 : ((max - min) / med) * 100, values: [...values] };
}

/** Rounded for the table and results.json: ratios keep 3 decimals, the rest 2. */
export function round(value: number, decimals = 3): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

/** The value below which `p` percent of `values` lie (nearest rank); 0 for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
