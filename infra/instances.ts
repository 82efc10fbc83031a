import { createHmac } from 'node:crypto';
import os from 'node:os';
import type { Queryable } from './db/database.ts';
import { reportingWrite, type WriteReport } from './db/write-report.ts';
import type { Logger } from './logger.ts';

/**
 * The instance registry (migration 028): each server and worker process keeps a row with the settings
 * every instance of a deployment must share, and looks at the others' rows on each heartbeat. Instances
 * that disagree are reported (the log, /ops, /metrics), not stopped: which side is right is the
 * operator's call, and a rolling change of a setting passes through a moment of disagreement anyway.
 */
export interface InstanceSettings {
  role: string;
  /** Undefined for a process that signs no sessions (a worker). */
  sessionSecret?: string;
  /** Undefined without Redis. */
  redisPrefix?: string;
}

export interface LiveInstance {
  instanceId: string;
  role: string;
  host: string;
  pid: number;
  /** A fingerprint of its SESSION_SECRET (the secret cannot be read back from it). */
  sessionKey: string | null;
  redisPrefix: string | null;
  startedAt: Date;
  seenAt: Date;
}

/** The settings every instance of a deployment must share. */
export const sharedSettings = ['SESSION_SECRET', 'REDIS_PREFIX'] as const;

export interface Disagreement {
  setting: (typeof sharedSettings)[number];
  /** Each value in use (a fingerprint for the secret) and the instances using it, the largest group first. */
  groups: { value: string; instances: string[] }[];
  /** What the disagreement breaks, for the operator. */
  consequence: string;
}

export const HEARTBEAT_MS = 10_000;
/** A row not seen for three heartbeats is a process that stopped (or cannot reach the database). */
const LIVE_WITHIN_SECONDS = 30;
/** Rows of processes that stopped without saying so (`kill -9`, a lost machine) are forgotten after this. */
const FORGET_AFTER_HOURS = 24;

const consequences = {
  SESSION_SECRET:
    'A sign-in on one of these instances is not accepted by the others: behind a load balancer its requests fail (403) whenever they reach another one.',
  REDIS_PREFIX:
    'These instances do not hear each other on Redis: live updates do not cross them, and a change sent from one waits for the inbox re-send (seconds) before the workers of another handle it.',
} as const;

/** A fingerprint of a session secret: equal secrets give equal ones; the secret cannot be read back. */
export const sessionKeyOf = (secret: string) =>
  createHmac('sha256', secret).update('rivals instance registry').digest('hex').slice(0, 12);

/** The settings on which live instances differ (instances without a value for one take no part). */
export function findDisagreements(instances: readonly LiveInstance[]): Disagreement[] {
  const settings = [
    ['SESSION_SECRET', (i: LiveInstance) => i.sessionKey],
    ['REDIS_PREFIX', (i: LiveInstance) => i.redisPrefix],
  ] as const;
  const found: Disagreement[] = [];
  for (const [setting, valueOf] of settings) {
    const groups = new Map<string, string[]>();
    for (const instance of instances) {
      const value = valueOf(instance);
      if (value !== null) groups.set(value, [...(groups.get(value) ?? []), instance.instanceId]);
    }
    if (groups.size < 2) continue;
    found.push({
      setting,
      groups: [...groups]
        .map(([value, ids]) => ({ value, instances: ids.sort() }))
        .sort((a, b) => b.instances.length - a.instances.length || a.value.localeCompare(b.value)),
      consequence: consequences[setting],
    });
  }
  return found;
}

/** The processes seen within the last three heartbeats, oldest first. */
export async function liveInstances(db: Queryable): Promise<LiveInstance[]> {
  const { rows } = await db.query<LiveInstance>(
    `SELECT instance_id AS "instanceId", role, host, pid, session_key AS "sessionKey",
            redis_prefix AS "redisPrefix", started_at AS "startedAt", seen_at AS "seenAt"
     FROM instances WHERE seen_at > now() - make_interval(secs => $1)
     ORDER BY started_at, instance_id`,
    [LIVE_WITHIN_SECONDS],
  );
  return rows;
}

export interface InstanceHeartbeat {
  /** Removes this process's row (a clean stop is not a stale row). */
  stop(): Promise<void>;
}

/**
 * Keeps this process's row fresh every `everyMs` and checks the others' on each beat. A disagreement
 * is logged as an error once when it appears (and once when it ends), and handed to `onCheck`.
 */
export function startInstanceHeartbeat(options: {
  db: Queryable;
  instanceId: string;
  settings: InstanceSettings;
  log: Logger;
  everyMs?: number;
  onCheck?: (disagreements: Disagreement[]) => void;
  /** Told how each beat's write went (see readiness: "database (writes)"). */
  onWrite?: WriteReport;
}): InstanceHeartbeat {
  const { db, instanceId, settings, log } = options;
  const values = [
    instanceId,
    settings.role,
    os.hostname(),
    process.pid,
    settings.sessionSecret === undefined ? null : sessionKeyOf(settings.sessionSecret),
    settings.redisPrefix ?? null,
  ];
  let reported = new Set<string>();
  let failing = false;

  const write = async () => {
    await db.query(
      `INSERT INTO instances (instance_id, role, host, pid, session_key, redis_prefix)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (instance_id) DO UPDATE SET seen_at = now()`,
      values,
    );
    await db.query('DELETE FROM instances WHERE seen_at < now() - make_interval(hours => $1)', [
      FORGET_AFTER_HOURS,
    ]);
  };

  const beat = async () => {
    try {
      await reportingWrite(options.onWrite, write());
      const disagreements = findDisagreements(await liveInstances(db));
      const now = new Set(disagreements.map((d) => JSON.stringify([d.setting, d.groups])));
      for (const d of disagreements)
        if (!reported.has(JSON.stringify([d.setting, d.groups])))
          log.error(
            { setting: d.setting, groups: d.groups },
            `instances run with different ${d.setting} values. ${d.consequence} Give every instance the same ${d.setting}.`,
          );
      if (reported.size > 0 && now.size === 0) log.info('instances agree on their shared settings again');
      reported = now;
      options.onCheck?.(disagreements);
      if (failing) log.info('instance registry: the database answers again');
      failing = false;
    } catch (error) {
      // The database being away is reported by readiness; said here once per outage.
      if (!failing) log.warn({ err: error }, 'instance registry: heartbeat failed; retrying');
      failing = true;
    }
  };

  // One beat at a time: a slow database skips beats rather than queueing them.
  let running: Promise<void> | undefined;
  const tick = () => {
    running ??= beat().finally(() => (running = undefined));
  };
  tick();
  const timer = setInterval(tick, options.everyMs ?? HEARTBEAT_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
      await db.query('DELETE FROM instances WHERE instance_id = $1', [instanceId]).catch(() => undefined);
    },
  };
}
