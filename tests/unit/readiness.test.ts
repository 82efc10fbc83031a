import { describe, expect, it } from 'vitest';
import { Readiness } from '#infra/readiness.ts';

describe('readiness', () => {
  it('a problem known from the last write lapses after its window; a success clears it at once', () => {
    let now = 1_000;
    const readiness = new Readiness(() => now);
    const full = Object.assign(new Error('could not extend file "base/5/16405"'), { code: '53100' });
    const disk = { state: "unavailable: the server's disk is full", forMs: 30_000 };

    readiness.report('database (writes)', full, disk);
    expect(readiness.current()).toEqual({
      'database (writes)': { state: disk.state, detail: 'could not extend file "base/5/16405"' },
    });
    now += 29_999;
    expect(readiness.unavailable()).toEqual({ 'database (writes)': true });
    // Taken out of rotation, the instance gets no writes to clear it: without a new refusal it lapses.
    now += 1;
    expect(readiness.current()).toEqual({});
    expect(readiness.unavailable()).toEqual({ 'database (writes)': false });

    readiness.report('database (writes)', full, disk);
    readiness.report('database (writes)', undefined);
    expect(readiness.current()).toEqual({});
  });

  it('a problem reported without a window holds until it is cleared', () => {
    let now = 0;
    const readiness = new Readiness(() => now);
    readiness.report('command bus', new Error('NOAUTH'));
    now += 24 * 60 * 60 * 1000;
    expect(readiness.current()).toEqual({ 'command bus': { state: 'unavailable', detail: 'NOAUTH' } });
    readiness.report('command bus', undefined);
    expect(readiness.unavailable()).toEqual({ 'command bus': false });
  });
});
