/**
 * Benchmark knobs: `--name=value` on the command line wins, then the environment variable
 * `BENCH_NAME` (upper case, dashes as underscores), then the default. Every script keeps its defaults
 * small, so `npm run bench` finishes in a few minutes; raise them for steadier figures.
 */
const fromArgs = (name: string): string | undefined => {
  const prefix = `--${name}=`;
  return process.argv
    .slice(2)
    .find((arg) => arg.startsWith(prefix))
    ?.slice(prefix.length);
};

const envName = (name: string) => `BENCH_${name.toUpperCase().replace(/-/g, '_')}`;

export function textKnob(name: string, fallback: string): string {
  return fromArgs(name) ?? (process.env[envName(name)] || fallback);
}

export function knob(name: string, fallback: number): number {
  const raw = textKnob(name, String(fallback));
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    throw new Error(
      `--${name} (or ${envName(name)}) must be a non-negative number, not ${JSON.stringify(raw)}`,
    );
  }
  return value;
}

/** A comma-separated list of numbers, e.g. `--writers=1,8`. */
export function listKnob(name: string, fallback: readonly number[]): number[] {
  return textKnob(name, fallback.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number)
    .filter((n) => Number.isFinite(n) && n > 0);
}

/** `--name=a,b` picks cases; default all (or `defaults`). */
export function caseKnob<T extends string>(
  name: string,
  all: readonly T[],
  defaults: readonly T[] = all,
): T[] {
  const raw = textKnob(name, defaults.join(','));
  const picked = raw.split(',').map((s) => s.trim());
  const unknown = picked.filter((p) => !(all as readonly string[]).includes(p));
  if (unknown.length > 0)
    throw new Error(`--${name}: unknown ${unknown.join(', ')}; one of ${all.join(', ')}`);
  return all.filter((c) => picked.includes(c));
}
