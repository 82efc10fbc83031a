import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '#infra/logger.ts';
import { readinessLogger } from '#web/readiness-checks.server.ts';

/** A logger whose lines are kept, parsed, for the test to read. */
function capturedLog() {
  const lines: { msg: string; dependency?: string; detail?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: createLogger('info', sink), lines };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('readiness log', () => {
  it('says a problem when it starts or changes and the recovery once, not at every probe', async () => {
    const { log, lines } = capturedLog();
    const logChanges = readinessLogger(log);
    const down = { state: 'unavailable', detail: 'connect ECONNREFUSED 127.0.0.1:5432' };
    logChanges({ database: { state: 'ok' } });
    logChanges({ database: down, 'command bus': { state: 'unavailable', detail: 'NOAUTH' } });
    logChanges({ database: down, 'command bus': { state: 'unavailable', detail: 'NOAUTH' } });
    logChanges({ database: { state: 'unavailable', detail: 'timeout' } });
    logChanges({ database: { state: 'ok' } });
    logChanges({ database: { state: 'ok' } });
    await flush();
    expect(lines.map((l) => [l.msg, l.dependency, l.detail])).toEqual([
      ['readiness: dependency not ok', 'database', 'connect ECONNREFUSED 127.0.0.1:5432'],
      ['readiness: dependency not ok', 'command bus', 'NOAUTH'],
      ['readiness: dependency not ok', 'database', 'timeout'],
      // The bus's problem is gone from the report: it recovered.
      ['readiness: dependency ok again', 'command bus', undefined],
      ['readiness: dependency ok again', 'database', undefined],
    ]);
  });

  it('says that a problem every instance has (projections held back) leaves the instance ready', async () => {
    const { log, lines } = capturedLog();
    const logChanges = readinessLogger(log);
    const held = { state: 'held back: …', detail: 'pid 4242 (…)', advisory: true };
    logChanges({ projections: held });
    logChanges({ projections: held });
    logChanges({ projections: { state: 'ok' } });
    await flush();
    expect(lines.map((l) => [l.msg, l.dependency])).toEqual([
      ['readiness: dependency not ok; this instance stays ready (every instance has it)', 'projections'],
      ['readiness: dependency ok again', 'projections'],
    ]);
  });
});
