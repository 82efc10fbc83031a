import { randomUUID } from 'node:crypto';
import type { RouterContext } from '@koa/router';
import type { Actor } from '#events/envelope.ts';
import type { BusEnvelope } from '#events/command-shape.ts';
import { NotRetryableError } from '#events/store/dead-letters.ts';
import { z } from 'zod';
import { ForbiddenError } from '#infra/errors.ts';
import {
  claimLetterAction,
  letterActionId,
  recordedLetterAction,
  type LetterAction,
} from '#services/operations/dead-letter-actions.ts';
import { addFlash } from '../../auth/flash.server.ts';
import { idempotencyKey } from '../../idempotency.server.ts';
import { parseInput } from '../../input.server.ts';
import { route, type RouteDef } from '../../routing.server.ts';
import type { AppDeps } from '../../app-deps.server.ts';
import type { Flash, SessionUser } from '../page-context.ts';

/** A dead letter's row id, already checked at the edge (web/input.server.ts, `letterId`). */
const deadLetterId = (ctx: { params: Record<string, string | undefined> }) => ctx.params.letterId ?? '';

/**
 * The letter's key (`deadLetterKey`), which its form carries so that a click arriving after the letter
 * was acted on finds what was done (`recordedLetterAction`). Absent from a script's request.
 */
const letterKeyField = z.object({
  letter: z
    .string()
    .regex(/^[0-9a-f]{32}$/, 'This form is out of date: reload /ops and try again.')
    .optional(),
});

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

/** What the first sending of a Retry or Discard answered when it did what it asked. */
function doneNotice(action: LetterAction, commandType: string | null, sent: boolean): Flash {
  if (action === 'discard') return { kind: 'success', text: 'Discarded the dead letter.' };
  const what = commandType ?? 'the command';
  return sent
    ? { kind: 'success', text: `Sent ${what} to the workers again.` }
    : {
        kind: 'success',
        text: `${what} is back in the queue. The command bus did not answer, so a worker sends it as soon as it does.`,
      };
}

/** What another request already did to the letter (another admin, or another tab), instead of this one. */
const doneBefore = (
  user: SessionUser,
  recorded: { action: LetterAction; by: Actor },
  wanted: LetterAction,
): Flash => ({
  kind: 'info',
  text:
    `That dead letter was already ${done[recorded.action]} by ${recorded.by.id === user.id ? 'you' : recorded.by.name}` +
    (recorded.action === wanted ? '.' : `, so it was not ${done[wanted]}.`),
});

/**
 * Retry / Discard on /ops. The action is recorded first (an event in the letter's own stream, shown in
 * /audit: the claim), and only then carried out on the stored letter. Two clicks at once act once. When
 * the database fails after the record, the letter stays listed as "retry recorded" and the next click of
 * either button finishes the recorded action; the audit never misses an action that was done.
 *
 * The form's key (`_idempotency_key`, one per rendered form) names the action (`letterActionId`): the same
 * request sent again, after its answer was lost or while it is still being answered, is found to be the
 * first one's and gets its answer: nothing is recorded, re-delivered or discarded a second time. Another
 * request that finds the letter acted on is told what was done and by whom. Without a key (a script),
 * a resend is told what was done, as another request is.
 */
async function actOnLetter(ctx: RouterContext, deps: AppDeps, wanted: LetterAction): Promise<void> {
  const id = deadLetterId(ctx);
  const user = ctx.state.user as SessionUser;
  const key = idempotencyKey(ctx);
  const actionId = key ? letterActionId(key, user.id, id, wanted) : randomUUID();
  const { letter: letterKey } = parseInput(letterKeyField, ctx.request.body ?? {}, 'The form');
  const letter = await deps.deadLetters.find(id);
  if (!letter) {
    // Carried out already: by this very request, sent before (its answer was lost), or by another one.
    const recorded = letterKey && (await recordedLetterAction(deps.store, id, letterKey));
    addFlash(
      ctx,
      !recorded
        ? { kind: 'info', text: 'That dead letter was already retried or discarded.' }
        : recorded.commandId === actionId
          ? doneNotice(recorded.action, recorded.commandType, true)
          : doneBefore(user, recorded, wanted),
    );
    return ctx.redirect('/ops');
  }
  if (wanted === 'retry' && !letter.envelope) {
    addFlash(ctx, { kind: 'error', text: 'That entry is not a valid command: it can only be discarded.' });
    return ctx.redirect('/ops');
  }
  const claim = await claimLetterAction(
    deps.store,
    letter,
    wanted,
    { id: user.id, name: user.name },
    actionId,
  );
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
  // Only a retried command goes back to the workers: a discarded one is never handled. Only the request
  // that took the letter out sends it: a resend of the same request finds it taken and sends nothing.
  const sent = claim.action === 'retry' && taken?.envelope ? await sendNow(deps, taken.envelope) : true;
  // This request's action (or its resend), or the same action recorded before and finished by this one
  // ("Click Retry again to finish it"): done. Another action recorded first: say which, and by whom.
  const finished = claim.mine || (claim.action === wanted && taken !== undefined);
  addFlash(
    ctx,
    finished
      ? doneNotice(claim.action, letter.envelope?.command.type ?? null, sent)
      : doneBefore(user, claim, wanted),
  );
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
