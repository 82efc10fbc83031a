import { NotRetryableError } from '#events/bus/command-bus.ts';
import { recordOperation } from '#services/operations/record.ts';
import { addFlash } from '../../auth/flash.server.ts';
import { route, type RouteDef } from '../../routing.server.ts';
import type { SessionUser } from '../page-context.ts';

/** A bus entry id, already checked at the edge (web/input.server.ts, `letterId`). */
const deadLetterId = (ctx: { params: Record<string, string | undefined> }) => ctx.params.letterId ?? '';

const actorOf = (user: SessionUser) => ({ id: user.id, name: user.name });

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
    if (!letter) {
      addFlash(ctx, { kind: 'info', text: 'That dead letter was already retried or discarded.' });
      return ctx.redirect('/ops');
    }
    await recordOperation(
      deps.store,
      {
        type: 'DeadLetterRetried',
        data: {
          deadLetterId: id,
          commandId: letter.envelope?.commandId ?? null,
          commandType: letter.envelope?.command.type ?? null,
        },
      },
      actorOf(ctx.state.user as SessionUser),
    );
    await deps.store.notifyAppended();
    addFlash(ctx, {
      kind: 'success',
      text: `Sent ${letter.envelope?.command.type ?? 'the command'} to the workers again.`,
    });
    ctx.redirect('/ops');
  }),

  route('POST', '/ops/dead-letters/:letterId/discard', 'ops.manage', async (ctx, deps) => {
    const id = deadLetterId(ctx);
    const letter = await deps.bus.discardDeadLetter(id);
    if (!letter) {
      addFlash(ctx, { kind: 'info', text: 'That dead letter was already retried or discarded.' });
      return ctx.redirect('/ops');
    }
    await recordOperation(
      deps.store,
      {
        type: 'DeadLetterDiscarded',
        data: {
          deadLetterId: id,
          commandId: letter.envelope?.commandId ?? null,
          commandType: letter.envelope?.command.type ?? null,
          error: letter.error,
        },
      },
      actorOf(ctx.state.user as SessionUser),
    );
    await deps.store.notifyAppended();
    addFlash(ctx, { kind: 'success', text: 'Discarded the dead letter.' });
    ctx.redirect('/ops');
  }),
];
