import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { sampledWarning, type SampledReport } from '#infra/sampled-warning.ts';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

it('says the first occurrence at once, and those within the minute together when it ends, without another one', () => {
  const said: SampledReport[] = [];
  const warn = sampledWarning((report) => said.push(report), 60_000);
  warn(new Error('first'));
  expect(said).toEqual([{ ignored: 1, err: new Error('first') }]);
  warn(new Error('second'));
  warn(new Error('third'));
  vi.advanceTimersByTime(59_999);
  expect(said).toHaveLength(1);
  // The window ends: the two are said, although nothing else came.
  vi.advanceTimersByTime(1);
  expect(said).toEqual([
    { ignored: 1, err: new Error('first') },
    { ignored: 2, err: new Error('third') },
  ]);
  // Quiet for a minute, nothing more is said.
  vi.advanceTimersByTime(120_000);
  expect(said).toHaveLength(2);
  // Long after, the next is said at once again.
  warn();
  expect(said.at(-1)).toEqual({ ignored: 1 });
});
