import { MultiBar, Presets, SingleBar } from 'cli-progress';

/**
 * A progress bar on a terminal; plain periodic lines when output goes to a log. Bars are drawn on
 * standard error, so that is the stream whose terminal counts (standard output may be piped).
 */
export function progressBar(label: string, total: number): { update(done: number): void; stop(): void } {
  const bar = new SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {value}/{total} | {duration_formatted} elapsed | eta {eta_formatted}`,
      noTTYOutput: !process.stderr.isTTY,
      notTTYSchedule: 2_000,
      hideCursor: true,
    },
    Presets.shades_classic,
  );
  bar.start(total, 0);
  return {
    update: (done) => bar.update(Math.min(done, total)),
    stop: () => bar.stop(),
  };
}

export interface RateBar {
  update(done: number, phase?: string): void;
  /** Shows what the job is doing now that it has read everything (indexing, swapping…). */
  phase(text: string): void;
  stop(): void;
}

const formatSeconds = (s: number): string =>
  !Number.isFinite(s)
    ? '?'
    : s < 60
      ? `${Math.ceil(s)}s`
      : `${Math.floor(s / 60)}m${String(Math.ceil(s % 60)).padStart(2, '0')}s`;

/**
 * Several bars at once (one per job), each showing done/total, the rate since it started and an ETA
 * from that rate (not from a jittery moving window). Plain periodic lines when output goes to a log.
 */
export function multiProgress(): { add(label: string, total: number, done?: number): RateBar; stop(): void } {
  const multi = new MultiBar(
    {
      format: '{label} [{bar}] {percentage}% | {done}/{all} events | {rate}/s | {phase}',
      noTTYOutput: !process.stderr.isTTY,
      notTTYSchedule: 2_000,
      hideCursor: true,
      clearOnComplete: false,
    },
    Presets.shades_classic,
  );
  return {
    add(label, total, done = 0) {
      const started = performance.now();
      const initial = done;
      // A projection with no events to read is done from the start: a full bar, "0/0 events" (it showed
      // "0% | 0/1"). The counts are shown from our own numbers, the bar's total only fills the bar.
      const safeTotal = Math.max(total, 1);
      const filled = (value: number) => (total === 0 ? 1 : Math.min(value, safeTotal));
      const bar = multi.create(safeTotal, filled(done), {
        label,
        rate: '-',
        phase: 'eta ?',
        done: done.toLocaleString('en-US'),
        all: total.toLocaleString('en-US'),
      });
      let last = done;
      return {
        phase: (text) => bar.update(filled(last), { phase: text }),
        update(value, phase) {
          last = value;
          const seconds = (performance.now() - started) / 1000;
          const rate = seconds > 0 ? (value - initial) / seconds : 0;
          const eta = rate > 0 ? (total - value) / rate : Infinity;
          bar.update(filled(value), {
            done: value.toLocaleString('en-US'),
            rate: Math.round(rate).toLocaleString('en-US'),
            phase: phase ?? (value >= total ? 'reading done' : `eta ${formatSeconds(eta)}`),
          });
        },
        stop: () => bar.stop(),
      };
    },
    stop: () => multi.stop(),
  };
}
