import pg from 'pg';
import type { Logger } from '../logger.ts';
import { typeParsers, type Database, type Notifier } from './database.ts';

/** What we may print about a connection string: never the password. */
export function describeUrl(url: string): string {
  const parsed = new URL(url);
  return `postgres://${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
}

export async function openPostgresDatabase(
  url: string,
  log: Logger,
  options: { poolSize?: number } = {},
): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    types: typeParsers,
    connectionTimeoutMillis: 5_000,
  });
  // An idle client dying (server restart) must not crash the process; the next query reconnects. Its
  // message and code only: the error carries the driver's client (host, user, database, statements),
  // which made several kilobytes of warning and a stack trace on an operator command's standard error.
  pool.on('error', (error) =>
    log.warn(
      { error: error.message, code: (error as { code?: string }).code },
      'idle database connection failed',
    ),
  );
  const notifier = new PostgresNotifier(url, log);
  return {
    kind: 'postgres',
    describe: describeUrl(url),
    pool,
    notifier,
    async close() {
      await notifier.close();
      await pool.end();
    },
  };
}

/**
 * LISTEN on one dedicated connection, shared by all subscribers, re-established with backoff after a
 * failure. Notifications sent while it was down are lost: subscribers keep a slow poll as a safety net.
 */
class PostgresNotifier implements Notifier {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly log: Logger,
  ) {}

  async listen(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>> {
    let set = this.handlers.get(channel);
    const client = await this.connect();
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    }
    set.add(onMessage);
    return async () => {
      set.delete(onMessage);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private connect(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url, types: typeParsers });
    client.on('notification', (message) => {
      for (const handler of this.handlers.get(message.channel) ?? []) handler(message.payload ?? '');
    });
    client.on('error', (error) => {
      this.log.warn({ err: error }, 'notification connection failed; reconnecting');
      if (this.client === client) this.client = undefined;
      void client.end().catch(() => undefined);
      this.reconnectSoon(500);
    });
    await client.connect();
    for (const channel of this.handlers.keys()) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    this.client = client;
    return client;
  }

  private reconnectSoon(delayMs: number): void {
    if (this.closed) return;
    setTimeout(() => {
      if (this.closed || this.client) return;
      this.connect().catch(() => this.reconnectSoon(Math.min(delayMs * 2, 10_000)));
    }, delayMs).unref();
  }
}
