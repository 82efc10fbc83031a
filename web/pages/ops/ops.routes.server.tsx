import type { RouterContext } from '@koa/router';
import type { CommandBus } from '#events/bus/command-bus.ts';
import { ServiceUnavailableError } from '#infra/errors.ts';
import { claimLetterAction, type LetterAction } from '#services/operations/dead-letter-actions.ts';
import { addFlash } from '../../auth/flash.server.ts';
import { route, type RouteDef } from '../../routing.server.ts';
import type { AppDeps } from '../../app-deps.server.ts';
import type { SessionUser } from '../page-context.ts';

/** A bus entry id, already checked at the edge (web/input.server.ts, `letterId`). */
const deadLetterId = (ctx: { params: Record<string, string | undefined> }) => ctx.params.letterId ?? '';

/** Carries out a recorded action on the bus; nothing happens when it was already done. */
const carryOut = (bus: CommandBus, id: string, action: LetterAction) =>
  action === 'retry' ? bus.retryDeadLetter(id) : bus.discardDeadLetter(id);

const done = { retry: 'retried', discard: 'discarded' } as const;

/** The letter as the bus has it now; a bus that does not answer is a 503 before anything is recorded. */
async function findLetter(deps: AppDeps, id: string) {
  try {
    return await deps.bus.findDeadLetter(id);
  } catch (error) {
    deps.log.warn({ err: error, deadLetterId: id }, 'dead letter: the command bus did not answer');
    throw new ServiceUnavailableError(
      'The command bus did not answer, so nothing was changed. Try again in a moment.',
    );
  }
}

/**
 * Retry / Discard on /ops. The action is recorded first (an event in the letter's own stream, shown in
 * /audit: the claim), and only then carried out on the bus. Two clicks at once act once. When the bus
 * fails after the record, the letter stays listed as "retry recorded" and the next click of either
 * button finishes the recorded action; the audit never misses an action that was done.
 */
async function actOnLetter(ctx: RouterContext, deps: AppDeps, wanted: LetterAction): Promise<void> {
  const id = deadLetterId(ctx);
  const letter = await findLetter(deps, id);
  if (!letter) {
    addFlash(ctx, { kind: 'info', text: 'That dead letter was already retried or discarded.' });
    return ctx.redirect('/ops');
  }
  if (wanted === 'retry' && !letter.envelope) {
    addFlash(ctx, { kind: 'error', text: 'That entry is not a valid command: it can only be discarded.' });
    return ctx.redirect('/ops');
  }
  const user = ctx.state.user as SessionUser;
  const claim = await claimLetterAction(deps.store, letter, wanted, { id: user.id, name: user.name });
  if (claim.mine) await deps.store.notifyAppended();
  // Accepted again before it is re-sent: if the bus loses it, a worker re-sends it from the inbox.
  if (claim.action === 'retry' && letter.envelope) await deps.inbox.reopen(letter.envelope.commandId);
  try {
    await carryOut(deps.bus, id, claim.action);
  } catch (error) {
    deps.log.warn({ err: error, deadLetterId: id, action: claim.action }, 'dead letter: bus action failed');
    addFlash(ctx, {
      kind: 'error',
      text: `The ${claim.action} is recorded, but the command bus did not answer. Click ${claim.action === 'retry' ? 'Retry' : 'Discard'} again to finish it.`,
    });
    return ctx.redirect('/ops');
  }
  if (!claim.mine) {
    addFlash(ctx, { kind: 'info', text: `That dead letter was already ${done[claim.action]}.` });
  } else if (claim.action === 'retry') {
    const what = letter.envelope?.command.type ?? 'the command';
    addFlash(ctx, { kind: 'success', text: `Sent ${what} to the workers again.` });
  } else {
    addFlash(ctx, { kind: 'success', text: 'Discarded the dead letter.' });
  }
  ctx.redirect('/ops');
}

export const opsRoutes: RouteDef[] = [
  route('POST', '/ops/dead-letters/:letterId/retry', 'ops.manage', (ctx, deps) =>
    actOnLetter(ctx, deps, 'retry'),
  ),
  route('POST', '/ops/dead-letters/:letterId/discard', 'ops.manage', (ctx, deps) =>
    actOnLetter(ctx, deps, 'discard'),
  ),
];
