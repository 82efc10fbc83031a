import type { Queryable } from '#infra/db/database.ts';
import { jsonArrays } from '#infra/db/json-arrays.ts';
import { defineProjection } from '../projection.ts';
import { auditLine, namesSegments, type AuditedEvent, type Subject } from './audit-summary.ts';

export const auditedTypes = [
  'CompetitorAdded',
  'CompetitorUpdated',
  'CompetitorNoteUpdated',
  'CompetitorDeleted',
  'CompetitorNameClaimed',
  'CompetitorNameReleased',
  'SegmentAdded',
  'CompetitorRankChanged',
  'CompetitorMovedToSegment',
  'SegmentsReordered',
  'UserAdded',
  'UserRoleChanged',
  'UserDisabled',
  'UserEnabled',
  'UserPasswordReset',
  'UserPasswordChanged',
  'ProjectionRebuilt',
  'DemoDataSeeded',
  'DeadLetterRetried',
  'DeadLetterDiscarded',
] as const;

const subjectId = (e: AuditedEvent): string | undefined =>
  'competitorId' in e.data ? e.data.competitorId : 'userId' in e.data ? e.data.userId : undefined;

/**
 * Every event as one line of the audit log, with who, when, and a readable summary.
 * Version 2: segments by name, not id (an install built by version 1 rebuilds at its next start).
 * Version 3: text composed (NFC) as events are now read, so names and notes typed with combining
 * accents are found by a search typed the other way (decision 0024).
 */
export const auditLogProjection = defineProjection({
  name: 'audit-log',
  version: 3,
  tables: ['audit_log', 'audit_log_subjects', 'audit_log_segments'],
  handles: auditedTypes,

  async apply(db, events, tables) {
    const audited = events as AuditedEvent[];
    const ids = [...new Set(audited.map(subjectId).filter((id): id is string => !!id))];
    const { rows } = await db.query<{ id: string; name: string; fields: Subject['fields'] }>(
      `SELECT id, name, fields FROM ${tables.audit_log_subjects} WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    const subjects = new Map<string, Subject>(rows.map((r) => [r.id, { name: r.name, fields: r.fields }]));
    const changed = new Map<string, Subject>();
    const segments = await segmentNames(db, tables.audit_log_segments, audited);
    const lines = audited.map((event) => {
      const line = auditLine(
        event,
        (id) => subjects.get(id),
        (id) => segments.get(id),
      );
      if (line.subject) {
        const { id, ...subject } = line.subject;
        subjects.set(id, subject);
        changed.set(id, subject);
      }
      return {
        position: event.position,
        at: event.metadata.at,
        actor_id: event.metadata.actor.id,
        actor_name: event.metadata.actor.name,
        type: event.type,
        stream: event.stream,
        competitor_id: line.competitorId,
        competitor_name: line.competitorName,
        summary: line.summary,
      };
    });
    for (const json of jsonArrays(lines)) {
      await db.query(
        `INSERT INTO ${tables.audit_log} (position, at, actor_id, actor_name, type, stream, competitor_id, competitor_name, summary)
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(position bigint, at timestamptz, actor_id text, actor_name text,
           type text, stream text, competitor_id uuid, competitor_name text, summary text)
         ON CONFLICT (position) DO NOTHING`,
        [json],
      );
    }
    const changedSubjects = [...changed].map(([id, s]) => ({ id, name: s.name, fields: s.fields }));
    for (const json of jsonArrays(changedSubjects)) {
      await db.query(
        `INSERT INTO ${tables.audit_log_subjects} (id, name, fields)
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, name text, fields jsonb)
         ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, fields = EXCLUDED.fields`,
        [json],
      );
    }
  },
});

/**
 * The names of the segments the batch's lines may name: every one seen so far (a handful), with those
 * the batch adds, which are stored for later batches.
 */
async function segmentNames(
  db: Queryable,
  table: string,
  events: readonly AuditedEvent[],
): Promise<Map<string, string>> {
  const added = events.flatMap((e) =>
    e.type === 'SegmentAdded' ? [{ id: e.data.segmentId, name: e.data.name }] : [],
  );
  if (added.length > 0)
    await db.query(
      `INSERT INTO ${table} (id, name) SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id text, name text)
       ON CONFLICT (id) DO NOTHING`,
      [JSON.stringify(added)],
    );
  if (!events.some((e) => namesSegments(e.type))) return new Map();
  const { rows } = await db.query<{ id: string; name: string }>(`SELECT id, name FROM ${table}`);
  return new Map(rows.map((r) => [r.id, r.name]));
}
