import { setTimeout as sleep } from 'node:timers/promises';

/** Waits until `check` holds, looking every 25 ms; fails naming `what` after `timeoutMs`. */
export async function until(
  check: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(25);
  }
  throw new Error(`timed out waiting for ${what}`);
}
