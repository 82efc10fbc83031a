import type { RouterContext } from '@koa/router';
import type { BusEnvelope } from '#events/command-shape.ts';
import { NotRetryableError } from '#events/store/dead-letters.ts';
import { ForbiddenError } from '#infra/errors.ts';
import { claimLetterAction, type LetterAction } from '#services/operations/dead-letter-actions.ts';
import { addFlash } from '../../auth/flash.server.ts';
import { route, type RouteDef } from '../../routing.server.ts';
import type { AppDeps } from '../../app-deps.server.ts';
import type { SessionUser } from '../page-context.ts';

/** A dead letter's row id, already checked at the edge (web/input.server.ts, `letterId`). */
const deadLetterId = (ctx: { params: Record<string, string | undefined> }) => ctx.params.letterId ?? '';

const done = { retry: 'retried', discard: 'discarded' } as const;
const button = { retry: 'Retry', discard: 'Discard' } as const;

/**
 * Carries out a recorded action on the stored letter (undefined: it was already carried out). A retry
 * puts the command back in the inbox, accepted now, in the same statement that takes the letter out.
 */
const carryOut = (deps: AppDeps, id: string, action: LetterAction) =>
  action === 'retry' ? deps.deadLetters.retry(id) : deps.deadLetters.discard(id);

/**
 * Sends a retried command to the workers now. Only the fast path: it is back in the inbox, so a worker's
 * sweeper sends it anyway once the bus answers. Says whether the bus took it.
 */
async function sendNow(deps: AppDeps, envelope: BusEnvelope): Promise<boolean> {
  try {
    await deps.bus.send(envelope);
    return true;
  } catch (error) {
    deps.log.warn(
      { err: error, commandId: envelope.commandId },
      'dead letter: the command bus did not answer',
    );
    return false;
  }
}

/**
 * Retry / Discard on /ops. The action is recorded first (an event in the letter's own stream, shown in
 * /audit: the claim), and only then carried out on the stored letter. Two clicks at once act once. When
 * the database fails after the record, the letter stays listed as "retry recorded" and the next click of
 * either button finishes the recorded action; the audit never misses an action that was done.
 */
async function actOnLetter(ctx: RouterContext, deps: AppDeps, wanted: LetterAction): Promise<void> {
  const id = deadLetterId(ctx);
  const letter = await deps.deadLetters.find(id);
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
  // Disabled or demoted since the request came in: nothing was recorded or done.
  if ('refused' in claim) throw new ForbiddenError(claim.refused);
  if (claim.mine) await deps.store.notifyAppended();
  let taken;
  try {
    taken = await carryOut(deps, id, claim.action);
  } catch (error) {
    deps.log.warn({ err: error, deadLetterId: id, action: claim.action }, 'dead letter: action failed');
    const why =
      error instanceof NotRetryableError
        ? error.message
        : `the database did not answer. Click ${button[claim.action]} again to finish it`;
    addFlash(ctx, { kind: 'error', text: `The ${claim.action} is recorded, but ${why}.` });
    return ctx.redirect('/ops');
  }
  // Only a retried command goes back to the workers: a discarded one is never handled.
  const sent = claim.action === 'retry' && taken?.envelope ? await sendNow(deps, taken.envelope) : true;
  if (!claim.mine) {
    addFlash(ctx, { kind: 'info', text: `That dead letter was already ${done[claim.action]}.` });
  } else if (claim.action === 'discard') {
    addFlash(ctx, { kind: 'success', text: 'Discarded the dead letter.' });
  } else {
    const what = letter.envelope?.command.type ?? 'the command';
    addFlash(
      ctx,
      sent
        ? { kind: 'success', text: `Sent ${what} to the workers again.` }
        : {
            kind: 'success',
            text: `${what} is back in the queue. The command bus did not answer, so a worker sends it as soon as it does.`,
          },
    );
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
