import { describe, expect, it } from 'vitest';
import { StorageMissingError } from '#infra/db/database.ts';
import { Readiness, writeReporter } from '#infra/readiness.ts';

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

  describe('writes reported by each path ("database (writes)")', () => {
    const failure = (code: string, message = `SQLSTATE ${code}`) =>
      Object.assign(new Error(message), { code });

    it.each([
      ['a full disk', failure('53100'), "unavailable: the server's disk is full"],
      ['out of memory', failure('53200'), 'unavailable: the database is out of memory or connections'],
      ['an I/O error', failure('58030'), 'unavailable: the database cannot read its files'],
      ['a file missing', failure('58P01'), 'unavailable: the database cannot read its files'],
      [
        'a deleted data folder',
        new StorageMissingError('gone'),
        "unavailable: the server's data folder is missing",
      ],
    ])('%s counts, saying so', (_, error, state) => {
      const readiness = new Readiness();
      writeReporter(readiness, 'projections')(error);
      expect(readiness.current()).toEqual({
        'database (writes)': { state, detail: `projections: ${error.message}` },
      });
    });

    it.each([
      ['a unique violation', failure('23505')],
      ['a serialization failure', failure('40001')],
      ['a deadlock', failure('40P01')],
      ['a lost connection (the database check says that)', failure('08006')],
      ['a refused connection', new Error('connect ECONNREFUSED 127.0.0.1:5432')],
      ['NUL in text', failure('22P05')],
    ])('%s does not count, and does not clear a refusal', (_, error) => {
      const readiness = new Readiness();
      const report = writeReporter(readiness, 'sessions');
      report(error);
      expect(readiness.current()).toEqual({});
      report(failure('53100'));
      report(error);
      expect(Object.keys(readiness.current())).toEqual(['database (writes)']);
    });

    it("a path's success clears its own refusal only", () => {
      const readiness = new Readiness();
      const projections = writeReporter(readiness, 'projections');
      const instances = writeReporter(readiness, 'instances');
      projections(failure('53100', 'could not extend file "base/5/16405"'));
      // A heartbeat row that fits in a page with room says nothing of the projection's table.
      instances();
      expect(readiness.unavailable()).toEqual({ 'database (writes)': true });
      projections();
      expect(readiness.unavailable()).toEqual({ 'database (writes)': false });
    });
  });
});
