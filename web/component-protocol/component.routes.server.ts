import { ForbiddenError, NotFoundError, UnsupportedMediaTypeError, ValidationError } from '#infra/errors.ts';
import { can } from '#events/user/permissions.ts';
import { dispatchAndWaitVisible, resendsAnAdmittedChange, unconfirmedChange } from '../commands.server.ts';
import { noteConflictMessage } from '../components/note-conflict.ts';
import type { SessionUser } from '../pages/page-context.ts';
import { timeZoneOf } from '../render.server.tsx';
import { route, type RouteDef } from '../routing.server.ts';
import { fieldErrors } from '../zod-form.server.ts';
import { componentRegistry, componentRequestSchema } from './registry.server.ts';
import { renderView } from './render-view.server.ts';

const statusOf = { validation: 400, forbidden: 403, not_found: 404, conflict: 409, failed: 500 } as const;

/**
 * POST /components/<component> {event|method, payload, expect?, view?}: validated, authorized and turned
 * into a command; answers once the change is visible (one bounded wait): accepted with the event position
 * and, when the call named its `view`, that page's fresh HTML — the page applies it without another
 * request — or rejected with a message a person can read. `pages` are the routes a view may name.
 */
export const componentRoutes = (pages: readonly RouteDef[]): RouteDef[] => [
  route('POST', '/components/:component', 'authenticated', async (ctx, deps) => {
    if (ctx.get('X-Requested-With') !== 'XMLHttpRequest') {
      throw new ValidationError('Component calls must be sent with X-Requested-With: XMLHttpRequest.');
    }
    const definition = Object.hasOwn(componentRegistry, ctx.params.component ?? '')
      ? componentRegistry[ctx.params.component ?? '']
      : undefined;
    if (!definition)
      throw new NotFoundError(`There is no component named ${JSON.stringify(ctx.params.component)}.`);
    if (!ctx.is('json'))
      throw new UnsupportedMediaTypeError(
        'Component calls must be sent as JSON (Content-Type: application/json).',
      );
    const request = componentRequestSchema.safeParse(ctx.request.body);
    if (!request.success) {
      const issue = request.error.issues[0];
      throw new ValidationError(
        issue?.path[0] === 'payload'
          ? 'A component call needs its "payload" field (the data of the event or method).'
          : (issue?.message ?? 'The request is not a component call.'),
      );
    }
    const { event, method, payload, expect, view } = request.data;
    const calls = event !== undefined ? definition.events : definition.methods;
    const name = event ?? method ?? '';
    const call = Object.hasOwn(calls, name) ? calls[name] : undefined;
    if (!call)
      throw new NotFoundError(
        `${ctx.params.component} has no ${event !== undefined ? 'event' : 'method'} named ${JSON.stringify(name)}.`,
      );
    // A call sent again whose first sending was admitted gets that answer, even by a user who may no
    // longer make it (demoted meanwhile): it changes nothing, and "not allowed" would deny a saved change.
    if (
      !can((ctx.state.user as SessionUser).role, call.action) &&
      !(await resendsAnAdmittedChange(ctx, deps))
    )
      throw new ForbiddenError();

    const parsed = call.schema.safeParse(payload);
    if (!parsed.success) {
      const fields = fieldErrors(parsed.error);
      ctx.status = 400;
      ctx.body = {
        status: 'rejected',
        code: 'validation',
        message: Object.values(fields)[0] ?? 'Invalid input.',
        fields,
      };
      return;
    }
    const { commandId, outcome, visible } = await dispatchAndWaitVisible(
      ctx,
      deps,
      call.command(parsed.data, { expect }),
      call.projections,
    );
    if (!outcome) {
      ctx.status = 202;
      ctx.body = {
        status: 'pending',
        commandId,
        message: unconfirmedChange(ctx),
      };
      return;
    }
    if (outcome.status === 'rejected') {
      ctx.status = statusOf[outcome.code];
      // A note saved meanwhile: when, on the viewer's clock (the decider's own message is in UTC).
      const message = outcome.code === 'conflict' && noteConflictMessage(outcome.details, timeZoneOf(ctx));
      ctx.body = message ? { ...outcome, message } : outcome;
      return;
    }
    ctx.body = {
      status: 'accepted',
      commandId,
      position: outcome.positions.length ? Math.max(...outcome.positions) : null,
      transactionId: outcome.transactionId,
      /** The version of what was changed, now: the page's next call expects it. */
      version: outcome.streamVersion,
      visible,
      // Only a view that shows the change is worth carrying; otherwise the page waits for the live feed.
      html: visible && view !== undefined ? await renderView(ctx, deps, pages, view) : undefined,
    };
  }),
];
