/** What a sampled warning reports: how many occurrences since the last report, and the latest one's error. */
export interface SampledReport {
  ignored: number;
  err?: unknown;
}

/**
 * A warning said at most once per `everyMs` for something that may happen often (messages from outside
 * that cannot be read). The first occurrence is said at once; any that follow within the window are
 * counted and said together when the window ends, so the count is never lost, nor left waiting for
 * another occurrence that may never come. The timer does not keep the process alive.
 */
export function sampledWarning(
  say: (report: SampledReport) => void,
  everyMs = 60_000,
): (error?: unknown) => void {
  let saidAt = Number.NEGATIVE_INFINITY;
  let pending = 0;
  let latest: unknown;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    if (pending === 0) return;
    say(latest === undefined ? { ignored: pending } : { ignored: pending, err: latest });
    pending = 0;
    latest = undefined;
    saidAt = Date.now();
  };
  return (error?: unknown) => {
    pending++;
    latest = error;
    if (timer) return;
    const wait = saidAt + everyMs - Date.now();
    if (wait <= 0) return flush();
    timer = setTimeout(flush, wait);
    timer.unref();
  };
}
