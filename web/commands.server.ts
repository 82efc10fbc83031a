import type { Context } from 'koa';
import { commandSchema, type Command, type Outcome } from '#events/command.ts';
import { requestContext } from '#infra/logger.ts';
import type { ProjectionName } from '#projections/all-projections.ts';
import type { AppDeps } from './app-deps.server.ts';
import { idempotencyKey } from './idempotency.server.ts';
import { parseInput } from './input.server.ts';
import type { SessionUser } from './pages/page-context.ts';

export interface CommandResult {
  outcome: Outcome | undefined;
  /** True once the named projections show the change (read-your-writes); false if the wait ran out. */
  visible: boolean;
}

/** How long a request waits for its change to become visible before answering anyway. */
export const VISIBILITY_WAIT_MS = 3_000;

/**
 * Sends a command as the signed-in user and waits, bounded, until the given read models show it,
 * so the page the user sees next already has their change.
 */
export async function runCommand(
  ctx: Context,
  deps: Pick<AppDeps, 'gateway' | 'watcher'>,
  command: Command,
  projections: readonly ProjectionName[],
): Promise<CommandResult> {
  // The bus refuses an envelope that does not parse (dead letter): refuse it here, with the message,
  // rather than answer "will be saved shortly" for a change that never will be.
  parseInput(commandSchema, command, 'The change');
  const user = ctx.state.user as SessionUser;
  const { outcome } = await deps.gateway.dispatch(
    command,
    { id: user.id, name: user.name },
    // The request id, as the request-context middleware accepted (or generated) it; the client's key
    // (when sent) as the command id, so a retried request is the same command.
    { correlationId: requestContext.getStore()?.reqId, commandId: idempotencyKey(ctx) },
  );
  if (outcome?.status !== 'accepted') return { outcome, visible: false };
  if (outcome.positions.length === 0) return { outcome, visible: true };
  const target = { transactionId: outcome.transactionId, position: Math.max(...outcome.positions) };
  const visible = await deps.watcher.waitFor(projections, target, VISIBILITY_WAIT_MS);
  return { outcome, visible };
}
