import type { Context } from 'koa';
import { commandSchema, type Command, type Outcome } from '#events/command.ts';
import { requestContext } from '#infra/logger.ts';
import type { ProjectionName } from '#projections/all-projections.ts';
import type { AppDeps } from './app-deps.server.ts';
import { IDEMPOTENCY_HEADER, idempotencyKey, requestDigest } from './idempotency.server.ts';
import { parseInput } from './input.server.ts';
import type { Flash, SessionUser } from './pages/page-context.ts';

export interface CommandResult {
  commandId: string;
  outcome: Outcome | undefined;
  /** True once the named projections show the change (read-your-writes); false if the wait ran out. */
  visible: boolean;
}

/**
 * The one bounded wait of a change: the worker's outcome and then the read models catching up share this
 * budget, so a request never waits longer than this in all before it answers (saved, or saved-but-not-yet-
 * visible, or sent-and-pending).
 */
export const CHANGE_WAIT_MS = 5_000;
/**
 * The notice for a change that was stored in the inbox but whose outcome did not come back within the
 * budget: not "saved" (it may still be refused, e.g. a name taken meanwhile), and what to do. Sending it
 * again is safe only when the request carried an idempotency key (the pages always send one): without
 * one, a resend is a new command.
 */
export const UNCONFIRMED_CHANGE =
  'Your change was received but is not confirmed yet (the server is busy). Reload in a moment to see it; ' +
  'sending it again is safe, it is never made twice.';
const UNCONFIRMED_UNKEYED_CHANGE =
  'Your change was received but is not confirmed yet (the server is busy). Reload in a moment to see ' +
  `whether it was made before sending it again: this request carried no ${IDEMPOTENCY_HEADER}, so a ` +
  'resend is a new change.';

/** The not-confirmed-yet notice that fits this request (with or without an idempotency key). */
export const unconfirmedChange = (ctx: Context): string =>
  idempotencyKey(ctx) ? UNCONFIRMED_CHANGE : UNCONFIRMED_UNKEYED_CHANGE;

/** A change that is stored but not yet shown by the page the user goes back to: say so, not only "done". */
export const savedMessage = (visible: boolean, done: string) =>
  visible ? done : `${done} It is saved; the list will show it in a moment.`;

/**
 * What a form tells its user after a change: refused (and why), done, done but not shown yet (`visible`
 * false: the read models had not caught up within the wait), or not confirmed yet.
 */
export const changeNotice = (
  ctx: Context,
  outcome: Outcome | undefined,
  done: string,
  visible: boolean,
): Flash =>
  outcome?.status === 'rejected'
    ? { kind: 'error', text: outcome.message }
    : outcome
      ? { kind: 'success', text: savedMessage(visible, done) }
      : { kind: 'info', text: unconfirmedChange(ctx) };

/** A change that arrives at the end of the budget still gets one look at the read models. */
const LAST_LOOK_MS = 100;

/**
 * Sends a command as the signed-in user and waits, within one budget, until the given read models show
 * it — so whatever the user sees next (a page, or the regions a component answer carries) has their change.
 */
export async function dispatchAndWaitVisible(
  ctx: Context,
  deps: Pick<AppDeps, 'gateway' | 'watcher'>,
  command: Command,
  projections: readonly ProjectionName[],
  budgetMs = CHANGE_WAIT_MS,
): Promise<CommandResult> {
  const deadline = Date.now() + budgetMs;
  // The bus refuses an envelope that does not parse (dead letter): refuse it here, with the message,
  // rather than answer "will be saved shortly" for a change that never will be.
  parseInput(commandSchema, command, 'The change');
  const user = ctx.state.user as SessionUser;
  const { commandId, outcome } = await deps.gateway.dispatch(
    command,
    { id: user.id, name: user.name },
    // The request id, as the request-context middleware accepted (or generated) it; the client's key
    // (when sent) as the command id, so a retried request is the same command.
    {
      correlationId: requestContext.getStore()?.reqId,
      commandId: idempotencyKey(ctx),
      requestDigest: requestDigest(ctx),
      timeoutMs: budgetMs,
    },
  );
  return untilVisible(deps, { commandId, outcome }, projections, deadline);
}

/**
 * The change this request is the retry of (the same key, sent with the same request), waited for as
 * `dispatchAndWaitVisible` waits; undefined when the request carries no key or its key was never sent.
 * For a request that finds nothing left to do, because the change it asks for is already made: a move
 * button's item at the end of its list is there because this very request, sent before, moved it.
 */
export async function recallChange(
  ctx: Context,
  deps: Pick<AppDeps, 'gateway' | 'watcher'>,
  projections: readonly ProjectionName[],
  budgetMs = CHANGE_WAIT_MS,
): Promise<CommandResult | undefined> {
  const key = idempotencyKey(ctx);
  if (!key) return undefined;
  const deadline = Date.now() + budgetMs;
  const user = ctx.state.user as SessionUser;
  const earlier = await deps.gateway.recall(
    key,
    { id: user.id, name: user.name },
    { requestDigest: requestDigest(ctx), timeoutMs: budgetMs },
  );
  return earlier && untilVisible(deps, earlier, projections, deadline);
}

/**
 * Whether this request is one the signed-in user sent before, whose change was admitted then (the same
 * key and request): a resubmission, which gets the first answer and changes nothing. False when it carries
 * no key (or a malformed one), or the database cannot say.
 */
export async function resendsAnAdmittedChange(
  ctx: Context,
  deps: Pick<AppDeps, 'gateway'>,
): Promise<boolean> {
  const user = ctx.state.user as SessionUser | undefined;
  let key: string | undefined;
  try {
    key = idempotencyKey(ctx);
  } catch {
    return false;
  }
  if (!user || !key) return false;
  return deps.gateway
    .sentBefore(key, { id: user.id, name: user.name }, requestDigest(ctx))
    .catch(() => false);
}

/** Waits, until `deadline`, for the read models to show an accepted change. */
async function untilVisible(
  deps: Pick<AppDeps, 'watcher'>,
  { commandId, outcome }: { commandId: string; outcome: Outcome | undefined },
  projections: readonly ProjectionName[],
  deadline: number,
): Promise<CommandResult> {
  if (outcome?.status !== 'accepted') return { commandId, outcome, visible: false };
  if (outcome.positions.length === 0) return { commandId, outcome, visible: true };
  const target = { transactionId: outcome.transactionId, position: Math.max(...outcome.positions) };
  const visible = await deps.watcher.waitFor(
    projections,
    target,
    Math.max(LAST_LOOK_MS, deadline - Date.now()),
  );
  return { commandId, outcome, visible };
}
