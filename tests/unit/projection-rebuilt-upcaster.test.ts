import { describe, expect, it } from 'vitest';
import { eventRegistry } from '#events/all-events.ts';
import { auditLine, type AuditedEvent } from '#projections/audit-log/audit-summary.ts';

/** The example upcaster: ProjectionRebuilt v1 (before resumable rebuilds) read as v2. */
describe('ProjectionRebuilt v1 → v2', () => {
  const v1 = {
    projection: 'competitor-list',
    events: 1200,
    toPosition: null,
    toTime: null,
    dryRun: false,
    differences: 3,
  };

  it('is written at version 2', () => {
    expect(eventRegistry.versionOf('ProjectionRebuilt')).toBe(2);
  });

  it('lifts v1 data: rows and seconds unknown (null), not resumed, everything else kept', () => {
    expect(eventRegistry.upcast('ProjectionRebuilt', 1, v1)).toEqual({
      ...v1,
      rows: null,
      seconds: null,
      resumed: false,
    });
  });

  it('rejects v1 data that was never valid v1, naming the field', () => {
    expect(() => eventRegistry.upcast('ProjectionRebuilt', 1, { ...v1, events: -1 })).toThrow(/events/);
  });

  it('takes v2 data as it is, and v2 data must carry the new fields', () => {
    const v2 = { ...v1, rows: 800, seconds: 1.5, resumed: true };
    expect(eventRegistry.upcast('ProjectionRebuilt', 2, v2)).toBe(v2);
    expect(() => eventRegistry.validate('ProjectionRebuilt', v1)).toThrow(/rows/);
  });
});

describe('ProjectionRebuilt in the audit log', () => {
  const rebuilt = (dryRun: boolean) =>
    ({
      type: 'ProjectionRebuilt',
      data: {
        projection: 'competitor-list',
        events: 1200,
        rows: 800,
        seconds: 1.5,
        resumed: false,
        toPosition: null,
        toTime: null,
        dryRun,
        differences: dryRun ? 3 : 0,
      },
    }) as unknown as AuditedEvent;

  it('names differing rows for a dry run only (a rebuild compares nothing)', () => {
    expect(auditLine(rebuilt(true), () => undefined).summary).toBe(
      'Dry-run rebuild of the competitor-list projection from 1200 events (3 differing rows)',
    );
    expect(auditLine(rebuilt(false), () => undefined).summary).toBe(
      'Rebuilt the competitor-list projection from 1200 events',
    );
  });
});
