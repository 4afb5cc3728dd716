// What every figure module hands back to bench/run.ts.

/** One target of issue 5, judged on the figures of this run. */
export interface TargetCheck {
  /** What the target says, e.g. `verify 2 KB ≤ 1.20× floor`. */
  target: string;
  met: boolean;
  /** The measured value(s) the judgement rests on, as printed. */
  measured: string;
}

export interface FigureResult {
  /** Ids of results.json `figures`. */
  figures: Record<string, number>;
  /** Medians, spreads and raw baselines behind the figures. */
  details: Record<string, unknown>;
  targets: TargetCheck[];
}

export interface Figure {
  /** Short name used by `npm run bench -- --only <name>`. */
  name: string;
  title: string;
  run(): Promise<FigureResult>;
}
