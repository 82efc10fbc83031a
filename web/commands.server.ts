import type { Context } from 'koa';
import type { Command, Outcome } from '#events/command.ts';
import { requestContext } from '#infra/logger.ts';
import type { ProjectionName } from '#projections/all-projections.ts';
import type { AppDeps } from './app-deps.server.ts';
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
  const user = ctx.state.user as SessionUser;
  const { outcome } = await deps.gateway.dispatch(
    command,
    { id: user.id, name: user.name },
    // The request id, as the request-context middleware accepted (or generated) it.
    { correlationId: requestContext.getStore()?.reqId },
  );
  if (outcome?.status !== 'accepted') return { outcome, visible: false };
  if (outcome.positions.length === 0) return { outcome, visible: true };
  const target = { transactionId: outcome.transactionId, position: Math.max(...outcome.positions) };
  const visible = await deps.watcher.waitFor(projections, target, VISIBILITY_WAIT_MS);
  return { outcome, visible };
}
