import { createRedisClient } from '#infra/redis.ts';
import { redisUrl, silentLog } from './services.ts';

/** Removes every Redis key a benchmark's app instances made under their prefix. */
export async function dropRedisPrefix(prefix: string): Promise<void> {
  const redis = createRedisClient(redisUrl, silentLog, { name: 'bench-cleanup' });
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    await redis.quit();
  }
}

/** Everything a part made, undone in reverse order whatever happened. */
export class Cleanup {
  private readonly steps: (() => Promise<unknown>)[] = [];
  add(step: () => Promise<unknown>): void {
    this.steps.push(step);
  }
  async run(): Promise<void> {
    for (const step of this.steps.reverse()) {
      await step().catch((error: unknown) => process.stderr.write(`cleanup: ${(error as Error).message}\n`));
    }
  }
}
