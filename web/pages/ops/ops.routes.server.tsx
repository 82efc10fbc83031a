import type { Context } from 'koa';
import { NotRetryableError, type DeadLetter } from '#events/bus/command-bus.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { recordOperation } from '#services/operations/record.ts';
import { addFlash } from '../../auth/flash.server.ts';
import { route, type RouteDef } from '../../routing.server.ts';
import type { SessionUser } from '../page-context.ts';

/** A bus entry id, already checked at the edge (web/input.server.ts, `letterId`). */
const deadLetterId = (ctx: { params: Record<string, string | undefined> }) => ctx.params.letterId ?? '';

const actorOf = (user: SessionUser) => ({ id: user.id, name: user.name });

/** The letter was handled meanwhile (another admin, another tab): nothing to do. */
function alreadyHandled(ctx: Context): void {
  addFlash(ctx, { kind: 'info', text: 'That dead letter was already retried or discarded.' });
  ctx.redirect('/ops');
}

/** Records what the signed-in admin did to a dead letter as an operations event, shown in /audit at once. */
async function recordLetterOperation(
  ctx: Context,
  store: EventStore,
  id: string,
  letter: DeadLetter,
  event: { type: 'DeadLetterRetried' } | { type: 'DeadLetterDiscarded'; data: { error: string } },
): Promise<void> {
  const data = {
    deadLetterId: id,
    commandId: letter.envelope?.commandId ?? null,
    commandType: letter.envelope?.command.type ?? null,
    ...('data' in event ? event.data : {}),
  };
  await recordOperation(store, { type: event.type, data }, actorOf(ctx.state.user as SessionUser));
  await store.notifyAppended();
}

/** Retry / Discard on /ops: each one an event in the log, so it shows in /audit. */
export const opsRoutes: RouteDef[] = [
  route('POST', '/ops/dead-letters/:letterId/retry', 'ops.manage', async (ctx, deps) => {
    const id = deadLetterId(ctx);
    let letter;
    try {
      letter = await deps.bus.retryDeadLetter(id);
    } catch (error) {
      if (!(error instanceof NotRetryableError)) throw error;
      addFlash(ctx, { kind: 'error', text: 'That entry is not a valid command: it can only be discarded.' });
      return ctx.redirect('/ops');
    }
    if (!letter) return alreadyHandled(ctx);
    await recordLetterOperation(ctx, deps.store, id, letter, { type: 'DeadLetterRetried' });
    addFlash(ctx, {
      kind: 'success',
      text: `Sent ${letter.envelope?.command.type ?? 'the command'} to the workers again.`,
    });
    ctx.redirect('/ops');
  }),

  route('POST', '/ops/dead-letters/:letterId/discard', 'ops.manage', async (ctx, deps) => {
    const id = deadLetterId(ctx);
    const letter = await deps.bus.discardDeadLetter(id);
    if (!letter) return alreadyHandled(ctx);
    await recordLetterOperation(ctx, deps.store, id, letter, {
      type: 'DeadLetterDiscarded',
      data: { error: letter.error },
    });
    addFlash(ctx, { kind: 'success', text: 'Discarded the dead letter.' });
    ctx.redirect('/ops');
  }),
];
