import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from './logger.ts';

export type { Redis };

export interface RedisClientOptions {
  /** For a connection that issues blocking reads: its commands may wait up to `blockMs`. */
  blockMs?: number;
  name: string;
  /**
   * For a connection that only SUBSCRIBEs: no ready check. The check sends INFO, which a reconnecting
   * subscriber connection refuses ("Connection in subscriber mode"), and the client then never got ready.
   */
  subscriber?: boolean;
}

/**
 * One place for ioredis settings. Commands wait through reconnects instead of failing fast
 * (`maxRetriesPerRequest: null`), and every command has a timeout so a blocking read on a connection
 * that died silently cannot hang its loop forever: it fails, and the loop reads again.
 */
export function createRedisClient(url: string, log: Logger, options: RedisClientOptions): Redis {
  const settings: RedisOptions = {
    connectionName: `rivals:${options.name}`,
    maxRetriesPerRequest: null,
    enableReadyCheck: !options.subscriber,
    keepAlive: 10_000,
    connectTimeout: 5_000,
    commandTimeout: (options.blockMs ?? 0) + 5_000,
    retryStrategy: (attempt) => Math.min(100 * 2 ** attempt, 5_000),
  };
  const client = new Redis(url, settings);
  let lastError = '';
  client.on('error', (error: Error) => {
    // ioredis repeats the same error on every retry; log each distinct one once.
    if (error.message !== lastError) log.warn({ err: error, redis: options.name }, 'redis connection error');
    lastError = error.message;
  });
  client.on('ready', () => {
    if (lastError) log.info({ redis: options.name }, 'redis connection restored');
    lastError = '';
  });
  return client;
}

/**
 * Closes a connection once the commands already sent are answered (QUIT queues behind them): a
 * subscription still being set up when the process stops (Ctrl+C right after start) completes instead
 * of being rejected into an unhandled error. If Redis does not answer within `ms` (it is down), the
 * connection is dropped.
 */
export async function closeRedisClient(client: Redis, ms = 1_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    client.quit().catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, ms))),
  ]);
  clearTimeout(timer);
  client.disconnect();
}
