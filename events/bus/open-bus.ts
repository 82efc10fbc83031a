import type { Config } from '#infra/config.ts';
import type { Logger } from '#infra/logger.ts';
import { createRedisClient, type Redis } from '#infra/redis.ts';
import type { DeadLetterSink } from '../store/dead-letters.ts';
import type { BusOptions, CommandBus } from './command-bus.ts';
import { MemoryCommandBus } from './memory-command-bus.ts';
import { RedisCommandBus } from './redis-command-bus.ts';
import { MemoryResultChannel, RedisResultChannel, type ResultChannel } from './result-channel.ts';

/** The command bus and the results channel a process uses, and the Redis client they share (if any). */
export interface OpenBus {
  bus: CommandBus;
  results: ResultChannel;
  /** The command connection, for health checks and admin tools; undefined in-process. */
  redis: Redis | undefined;
  close(): Promise<void>;
}

/**
 * Opens the bus the configuration names, as `openDatabase` opens the database: Redis Streams at
 * REDIS_URL (each process a consumer in one group, answers on its own channel), or in-process queues
 * when there is no Redis (one process does everything).
 */
export async function openBus(
  config: Config,
  log: Logger,
  options: { instanceId: string; claimIdleMs?: number; letters: DeadLetterSink },
): Promise<OpenBus> {
  const busOptions: BusOptions = {
    claimIdleMs: options.claimIdleMs,
    consumerIdleMs: config.BUS_CONSUMER_IDLE_MS,
  };
  if (!config.REDIS_URL) {
    const bus = new MemoryCommandBus(options.letters, busOptions);
    const results = new MemoryResultChannel();
    return { bus, results, redis: undefined, close: () => closeAll(bus, results) };
  }
  const url = config.REDIS_URL;
  const redis = createRedisClient(url, log, { name: 'commands' });
  // Blocking reads and subscriptions each hold a connection of their own.
  const blocking = createRedisClient(url, log, { name: 'bus-reader', blockMs: 2_000 });
  const subscriber = createRedisClient(url, log, { name: 'results', subscriber: true });
  const bus = new RedisCommandBus(redis, blocking, config.REDIS_PREFIX, options.letters, busOptions);
  const results = new RedisResultChannel(redis, subscriber, config.REDIS_PREFIX, options.instanceId, log);
  const close = async () => {
    await closeAll(bus, results);
    await redis.quit();
  };
  try {
    await bus.ensureGroup();
    const adopted = await bus.adoptOldDeadLetters();
    if (adopted > 0) log.info({ adopted }, 'moved the dead letters kept on Redis into the database');
    await results.whenReady();
  } catch (error) {
    await close().catch(() => redis.disconnect());
    throw error;
  }
  return { bus, results, redis, close };
}

async function closeAll(bus: CommandBus, results: ResultChannel): Promise<void> {
  await results.close();
  await bus.close();
}
