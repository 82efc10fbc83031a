import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { z } from 'zod';
import { competitorFields } from '#events/competitor/fields.ts';
import { NotFoundError } from '#infra/errors.ts';
import { findCompetitor } from '#projections/competitor-list/competitor-list.queries.ts';
import { listSegments } from '#projections/segment-board/segment-board.queries.ts';
import type { AppDeps } from '../../app-deps.server.ts';
import { addFlash } from '../../auth/flash.server.ts';
import { runCommand } from '../../commands.server.ts';
import { pageContext, renderHtml } from '../../render.server.tsx';
import { route, type RouteDef } from '../../routing.server.ts';
import { fieldErrors, formValues } from '../../zod-form.server.ts';
import {
  CompetitorFormPage,
  emptyCompetitorForm,
  type CompetitorFormValues,
} from './competitor-form.page.tsx';

const formKeys = ['name', 'website', 'segmentId', 'threat', 'headquarters', 'expectedVersion'] as const;
const expectedVersion = z.coerce.number().int().nonnegative().optional();

export const competitorReadModels = ['competitor-list'] as const;

async function renderForm(
  ctx: Context,
  deps: AppDeps,
  form: {
    mode: 'new' | 'edit';
    action: string;
    values: CompetitorFormValues;
    errors?: Record<string, string>;
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

export async function loadCompetitor(deps: AppDeps, id: string | undefined) {
  const competitor = id ? await findCompetitor(deps.db.pool, id) : undefined;
  if (!competitor) throw new NotFoundError('This competitor does not exist or was deleted.');
  return competitor;
}

const savedMessage = (visible: boolean, done: string) =>
  visible ? done : `${done} It is saved; the list will show it in a moment.`;

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
    const values = formValues(ctx.request.body, formKeys);
    const form = { mode: 'new' as const, action: '/competitors/new', values, cancelHref: '/competitors' };
    const parsed = competitorFields.safeParse(values);
    if (!parsed.success) return renderForm(ctx, deps, { ...form, errors: fieldErrors(parsed.error) }, 400);
    const competitorId = randomUUID();
    const { outcome, visible } = await runCommand(
      ctx,
      deps,
      { type: 'AddCompetitor', payload: { ...parsed.data, competitorId } },
      competitorReadModels,
    );
    if (outcome?.status === 'rejected') {
      return renderForm(
        ctx,
        deps,
        { ...form, errors: outcome.fields ?? { _form: outcome.message } },
        outcome.code === 'conflict' ? 409 : 400,
      );
    }
    addFlash(ctx, {
      kind: 'success',
      text: savedMessage(visible && !!outcome, `${parsed.data.name} was added.`),
    });
    ctx.redirect(visible && outcome ? `/competitors/${competitorId}` : '/competitors');
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
    };
    await renderForm(ctx, deps, {
      mode: 'edit',
      action: `/competitors/${c.id}/edit`,
      values,
      cancelHref: `/competitors/${c.id}`,
    });
  }),

  route('POST', '/competitors/:id/edit', 'competitors.edit', async (ctx, deps) => {
    const c = await loadCompetitor(deps, ctx.params.id);
    const values = formValues(ctx.request.body, formKeys);
    const form = {
      mode: 'edit' as const,
      action: `/competitors/${c.id}/edit`,
      values,
      cancelHref: `/competitors/${c.id}`,
    };
    const parsed = competitorFields.safeParse(values);
    if (!parsed.success) return renderForm(ctx, deps, { ...form, errors: fieldErrors(parsed.error) }, 400);
    const version = expectedVersion.safeParse(values.expectedVersion || undefined);
    const { outcome, visible } = await runCommand(
      ctx,
      deps,
      {
        type: 'UpdateCompetitor',
        payload: {
          ...parsed.data,
          competitorId: c.id,
          expectedVersion: version.success ? version.data : undefined,
        },
      },
      competitorReadModels,
    );
    if (outcome?.status === 'rejected') {
      return renderForm(
        ctx,
        deps,
        { ...form, errors: outcome.fields ?? { _form: outcome.message } },
        outcome.code === 'conflict' ? 409 : 400,
      );
    }
    addFlash(ctx, {
      kind: 'success',
      text: savedMessage(visible && !!outcome, `${parsed.data.name} was saved.`),
    });
    ctx.redirect(`/competitors/${c.id}`);
  }),

  route('POST', '/competitors/:id/delete', 'competitors.delete', async (ctx, deps) => {
    const c = await loadCompetitor(deps, ctx.params.id);
    const { outcome } = await runCommand(
      ctx,
      deps,
      { type: 'DeleteCompetitor', payload: { competitorId: c.id } },
      competitorReadModels,
    );
    addFlash(
      ctx,
      outcome?.status === 'rejected'
        ? { kind: 'error', text: outcome.message }
        : { kind: 'success', text: `${c.name} was deleted.` },
    );
    ctx.redirect('/competitors');
  }),
];
