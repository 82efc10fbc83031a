import { afterEach, expect, it, vi } from 'vitest';
import { multiProgress } from '#infra/cli/progress.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

/** What the bars wrote to standard error (not a terminal here: plain lines). */
function captured(): () => string {
  const lines: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  return () => lines.join('');
}

it('a rebuild bar with no events to read is full and says 0/0, not 0% of 0/1', () => {
  const output = captured();
  const bars = multiProgress();
  bars.add('user-list', 0).update(0);
  bars.stop();
  expect(output()).toContain('user-list [');
  expect(output()).toMatch(/100% \| 0\/0 events/);
  expect(output()).not.toContain('0/1');
});

it('a bar counts what was read of its total, in the events the projection handles', () => {
  const output = captured();
  const bars = multiProgress();
  const bar = bars.add('audit-log', 2_000, 500);
  bar.update(1_000);
  bars.stop();
  expect(output()).toMatch(/50% \| 1,000\/2,000 events/);
});
