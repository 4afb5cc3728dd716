// The machine a run was recorded on: ratios travel between machines better than times, but
// core count and Node version still change them.
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, totalmem } from 'node:os';

export interface Machine {
  cores: number;
  cpu: string;
  node: string;
  platform: string;
  totalMemoryMb: number;
  loadAverage1m: number;
  date: string;
}

function cpuModel(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('model name'));
    return line?.split(':')[1]?.trim() ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

export function machine(): Machine {
  return {
    cores: availableParallelism(),
    cpu: cpuModel(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    totalMemoryMb: Math.round(totalmem() / 2 ** 20),
    loadAverage1m: Math.round(loadavg()[0]! * 100) / 100,
    date: new Date().toISOString(),
  };
}
