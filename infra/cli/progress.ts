import { SingleBar, Presets } from 'cli-progress';

/** A progress bar on a terminal; plain periodic lines when output goes to a log. */
export function progressBar(label: string, total: number): { update(done: number): void; stop(): void } {
  const bar = new SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {value}/{total} | {duration_formatted} elapsed | eta {eta_formatted}`,
      noTTYOutput: !process.stdout.isTTY,
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
