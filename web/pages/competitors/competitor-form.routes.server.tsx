import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Command, Outcome } from '#events/command.ts';
import { text } from '#events/text.ts';
import {
  competitorFieldNames,
  typedCompetitorFields,
  type CompetitorFieldName,
  type CompetitorFields,
} from '#events/competitor/fields.ts';
import { NotFoundError, ValidationError } from '#infra/errors.ts';
import { lastKnownName } from '#projections/audit-log/audit-log.queries.ts';
import {
  competitorSortColumns,
  findCompetitor,
} from '#projections/competitor-list/competitor-list.queries.ts';
import { listSegments } from '#projections/segment-board/segment-board.queries.ts';
import type { AppDeps } from '../../app-deps.server.ts';
import { addFlash } from '../../auth/flash.server.ts';
import {
  changeNotice,
  dispatchAndWaitVisible,
  recallChange,
  savedMessage,
  unconfirmedChange,
} from '../../commands.server.ts';
import { parseTableState, toQueryString } from '../../components/data-table/table-state.ts';
import { idempotencyKey } from '../../idempotency.server.ts';
import { editSavedMessage } from './edit-saved.ts';
import { pageContext, renderHtml, timeZoneOf } from '../../render.server.tsx';
import { route, type RouteDef } from '../../routing.server.ts';
import { formValues, notTextMessage, parseForm } from '../../zod-form.server.ts';
import {
  CompetitorFormPage,
  emptyCompetitorForm,
  type CompetitorFormValues,
  type TheirValue,
} from './competitor-form.page.tsx';
import { editConflictForm } from './edit-conflict.ts';

const formKeys = [...competitorFieldNames, 'expectedVersion', 'baseSegmentId'] as const;
/**
 * The version the edit form was opened at: required, as every edit form carries it. A form without it
 * (a script, a damaged page) was saved as an overwrite, merging nothing: whatever a colleague had
 * changed since was silently lost (found by review, helper-33).
 */
const expectedVersion = z.coerce.number().int().nonnegative();
/** The segment the edit form showed: only a change from it moves the competitor (decision 0013). */
const baseSegmentId = text('Segment').trim().min(1).max(64).optional();
const staleFormMessage = 'This form is damaged or out of date. Reload the page and make your change again.';

export const competitorReadModels = ['competitor-list'] as const;

async function renderForm(
  ctx: Context,
  deps: AppDeps,
  form: {
    mode: 'new' | 'edit';
    action: string;
    values: CompetitorFormValues;
    errors?: Record<string, string>;
    theirs?: Partial<Record<CompetitorFieldName, TheirValue>>;
    cancelHref: string;
  },
  status = 200,
) {
  const segments = await listSegments(deps.db.pool);
  renderHtml(
    ctx,
    <CompetitorFormPage page={pageContext(ctx)} segments={segments} errors={form.errors ?? {}} {...form} />,
    status,
  );
}

const deletedWhileEditing =
  'This competitor was deleted while you were editing it, so nothing was saved. What you typed is below: add it again as a new competitor, or leave this page to discard it.';

/** A resubmitted edit whose first sending was saved, the competitor deleted since. */
export const savedThenDeleted = (name: string) =>
  `Your changes to ${name.trim() || 'this competitor'} were saved, but it has since been deleted.`;

export async function loadCompetitor(deps: AppDeps, id: string | undefined) {
  const competitor = id ? await findCompetitor(deps.db.pool, id) : undefined;
  if (!competitor) throw new NotFoundError('This competitor does not exist or was deleted.');
  return competitor;
}

/**
 * The add and edit forms' POST: validate (re-render with a message per field and what was typed),
 * send the command, show a rejection in the form, or redirect with a notice once the change is visible.
 */
async function submitForm(
  ctx: Context,
  deps: AppDeps,
  options: {
    form: { mode: 'new' | 'edit'; action: string; cancelHref: string };
    command(fields: CompetitorFields, values: CompetitorFormValues): Command;
    /** The notice once accepted; `visible`: the read models show the change (so they can be read for it). */
    done(
      fields: CompetitorFields,
      outcome: Extract<Outcome, { status: 'accepted' }>,
      visible: boolean,
    ): string | Promise<string>;
    next(visible: boolean): string;
    /** Edit: where the competitor is on the board now, for the form shown again after a conflict. */
    segmentNow?(): Promise<string | undefined>;
  },
): Promise<void> {
  // A field sent twice (a list) reads as empty: saved, that cleared the headquarters or website without
  // a word. Refused instead, saying which, with what was typed first kept in the form.
  const parsed = parseForm(ctx.request.body, formKeys, typedCompetitorFields);
  const { values } = parsed;
  const form = { ...options.form, values };
  if (parsed.errors) {
    // The hidden fields (version, segment shown) have no place for a message: the form's own says it.
    const errors = parsed.notText.length > 0 ? { _form: notTextMessage(), ...parsed.errors } : parsed.errors;
    return renderForm(ctx, deps, { ...form, errors }, 400);
  }
  const { outcome, visible } = await dispatchAndWaitVisible(
    ctx,
    deps,
    options.command(parsed.data, values),
    competitorReadModels,
  );
  if (outcome?.status === 'rejected') {
    // Both changed a field since the form was opened: the merge, each such field marked (decision 0021).
    const merge =
      outcome.code === 'conflict' &&
      editConflictForm(outcome.details, values, timeZoneOf(ctx), await options.segmentNow?.());
    if (merge) return renderForm(ctx, deps, { ...form, ...merge }, 409);
    const errors = outcome.fields ?? { _form: outcome.message };
    return renderForm(ctx, deps, { ...form, errors }, outcome.code === 'conflict' ? 409 : 400);
  }
  addFlash(
    ctx,
    outcome
      ? { kind: 'success', text: savedMessage(visible, await options.done(parsed.data, outcome, visible)) }
      : { kind: 'info', text: unconfirmedChange(ctx) },
  );
  ctx.redirect(options.next(visible && !!outcome));
}

export const competitorFormRoutes: RouteDef[] = [
  route('GET', '/competitors/new', 'competitors.create', (ctx, deps) =>
    renderForm(ctx, deps, {
      mode: 'new',
      action: '/competitors/new',
      values: emptyCompetitorForm,
      cancelHref: '/competitors',
    }),
  ),

  route('POST', '/competitors/new', 'competitors.create', async (ctx, deps) => {
    // A retried submission (same key) must name the same competitor, so the key names it.
    const competitorId = idempotencyKey(ctx) ?? randomUUID();
    await submitForm(ctx, deps, {
      form: { mode: 'new', action: '/competitors/new', cancelHref: '/competitors' },
      command: (fields) => ({ type: 'AddCompetitor', payload: { ...fields, competitorId } }),
      done: (fields) => `${fields.name} was added.`,
      next: (visible) => (visible ? `/competitors/${competitorId}` : '/competitors'),
    });
  }),

  route('GET', '/competitors/:id/edit', 'competitors.edit', async (ctx, deps) => {
    const c = await loadCompetitor(deps, ctx.params.id);
    const values = {
      name: c.name,
      website: c.website ?? '',
      segmentId: c.segmentId,
      threat: c.threat,
      headquarters: c.headquarters ?? '',
      expectedVersion: String(c.version),
      baseSegmentId: c.segmentId,
    };
    await renderForm(ctx, deps, {
      mode: 'edit',
      action: `/competitors/${c.id}/edit`,
      values,
      cancelHref: `/competitors/${c.id}`,
    });
  }),

  route('POST', '/competitors/:id/edit', 'competitors.edit', async (ctx, deps) => {
    const c = await loadCompetitor(deps, ctx.params.id).catch((error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    });
    if (!c) {
      // The same form sent again (a retry after a lost answer) whose first sending saved the edit before
      // a colleague deleted the competitor: it was saved, so the answer must not say "nothing was saved"
      // (and invite adding it again as a new competitor).
      const earlier = await recallChange(ctx, deps, competitorReadModels);
      if (earlier?.outcome?.status === 'accepted') {
        const { name } = formValues(ctx.request.body, ['name'] as const);
        addFlash(ctx, { kind: 'info', text: savedThenDeleted(name) });
        return ctx.redirect('/competitors');
      }
    }
    // Deleted while this form was open: what was typed is not lost with it. The form comes back as an
    // add form with the typed values, saying so (a deleted competitor's name is free again).
    if (!c)
      return renderForm(
        ctx,
        deps,
        {
          mode: 'new',
          action: '/competitors/new',
          cancelHref: '/competitors',
          values: formValues(ctx.request.body, formKeys),
          errors: { _form: deletedWhileEditing },
        },
        404,
      );
    await submitForm(ctx, deps, {
      form: { mode: 'edit', action: `/competitors/${c.id}/edit`, cancelHref: `/competitors/${c.id}` },
      command: (fields, values) => {
        const version = expectedVersion.safeParse(values.expectedVersion || undefined);
        const base = baseSegmentId.safeParse(values.baseSegmentId || undefined);
        // Both come from the form as the page rendered it: anything else is a form from elsewhere, and
        // saving it without them would silently overwrite whatever changed meanwhile.
        if (!version.success || !base.success) throw new ValidationError(staleFormMessage);
        return {
          type: 'UpdateCompetitor',
          payload: { ...fields, competitorId: c.id, expectedVersion: version.data, baseSegmentId: base.data },
        };
      },
      // The edit is stored: a failed read for the notice (the database gone that moment) must not answer
      // "nothing was changed"; the notice then only says it was saved.
      done: async (fields, outcome, visible) =>
        editSavedMessage(
          fields,
          visible ? await findCompetitor(deps.db.pool, c.id).catch(() => undefined) : undefined,
          outcome.streamVersion,
        ),
      next: () => `/competitors/${c.id}`,
      segmentNow: async () => (await findCompetitor(deps.db.pool, c.id))?.segmentId,
    });
  }),

  route('POST', '/competitors/:id/delete', 'competitors.delete', async (ctx, deps) => {
    // A retry of a delete that went through finds the competitor gone: with its key it still goes to the
    // gateway, which answers the first outcome (or refuses a key of another user or request).
    const id = ctx.params.id ?? '';
    const c = await findCompetitor(deps.db.pool, id);
    if (!c && !idempotencyKey(ctx)) throw new NotFoundError('This competitor does not exist or was deleted.');
    const { outcome, visible } = await dispatchAndWaitVisible(
      ctx,
      deps,
      { type: 'DeleteCompetitor', payload: { competitorId: id } },
      competitorReadModels,
    );
    // Deleted by someone else first (a table opened before): accepted, with nothing left to record.
    const name = c?.name ?? (await lastKnownName(deps.db.pool, id)) ?? 'The competitor';
    const already = outcome?.status === 'accepted' && outcome.positions.length === 0;
    addFlash(ctx, changeNotice(ctx, outcome, `${name} was ${already ? 'already ' : ''}deleted.`, visible));
    // Back to the table as the user left it (search, sort, page, rows per page), read as leniently as the
    // table reads its own address; a form without it (an older page) goes to the plain list.
    const { list } = formValues(ctx.request.body, ['list'] as const);
    const state = parseTableState(Object.fromEntries(new URLSearchParams(list)), competitorSortColumns);
    ctx.redirect(list ? `/competitors?${toQueryString(state)}` : '/competitors');
  }),
];
