import os from 'node:os';
import { report } from './stats.ts';

const loadAtStart = os.loadavg()[0] ?? Number.NaN;

/**
 * How busy the machine was while a script ran (1-minute load average at its start and end, and the
 * core count): every figure is relative, but a reader should see when the absolute ones were taken
 * on a crowded machine.
 */
export function reportMachine(script: string): void {
  report(`${script}.machine`, {
    cores: os.availableParallelism(),
    load1_start: loadAtStart,
    load1_end: os.loadavg()[0] ?? Number.NaN,
  });
}
