import type { RouterContext } from '@koa/router';
import { z } from 'zod';
import { isNoteColumn, noteValue, type NoteColumn } from '#events/competitor/fields.ts';
import { NotFoundError } from '#infra/errors.ts';
import type { AppDeps } from '../../app-deps.server.ts';
import { addFlash } from '../../auth/flash.server.ts';
import { noteReadModels } from '../../component-protocol/registry.server.ts';
import { changeNotice, dispatchAndWaitVisible } from '../../commands.server.ts';
import { pageContext, renderHtml } from '../../render.server.tsx';
import { route, type RouteDef } from '../../routing.server.ts';
import { parseForm } from '../../zod-form.server.ts';
import { loadCompetitor } from './competitor-form.routes.server.tsx';
import { NoteFormPage, type NoteFormProps } from './note-form.page.tsx';

const staleForm = 'This form is damaged or out of date. Reload the page and make your change again.';
const overwriteHint =
  'Their text is shown below yours. Save again to replace it with yours, or Cancel to keep theirs.';
const noteForm = z.object({
  value: noteValue,
  version: z
    .string()
    .regex(/^\d{1,15}$/, staleForm)
    .transform(Number),
});

/** The note the address names (web/input.server.ts has already refused any other). */
function columnOf(ctx: RouterContext): NoteColumn {
  const column = ctx.params.column ?? '';
  if (!isNoteColumn(column)) throw new NotFoundError('There is no such note.');
  return column;
}

function render(ctx: RouterContext, props: Omit<NoteFormProps, 'page'>, status = 200) {
  renderHtml(ctx, <NoteFormPage page={pageContext(ctx)} {...props} />, status);
}

/** Editing a note without JavaScript: the notes dialog's GET and save as a plain form. */
export const noteFormRoutes: RouteDef[] = [
  route('GET', '/competitors/:id/notes/:column', 'notes.edit', async (ctx, deps: AppDeps) => {
    const column = columnOf(ctx);
    const c = await loadCompetitor(deps, ctx.params.id);
    render(ctx, {
      competitor: c,
      column,
      version: c.noteMeta[column]?.version ?? 0,
      value: c.notes[column] ?? '',
      errors: {},
    });
  }),

  route('POST', '/competitors/:id/notes/:column', 'notes.edit', async (ctx, deps: AppDeps) => {
    const column = columnOf(ctx);
    const c = await loadCompetitor(deps, ctx.params.id);
    const form = parseForm(ctx.request.body, ['value', 'version'] as const, noteForm);
    const shown = {
      competitor: c,
      column,
      version: Number(form.values.version) || 0,
      value: form.values.value,
    };
    if (form.errors) {
      const { value, version, _form } = form.errors;
      return render(ctx, { ...shown, errors: { value, _form: version ?? _form } }, 400);
    }
    const { outcome, visible } = await dispatchAndWaitVisible(
      ctx,
      deps,
      {
        type: 'UpdateCompetitorNote',
        payload: {
          competitorId: c.id,
          column,
          value: form.data.value,
          expectedNoteVersion: form.data.version,
        },
      },
      noteReadModels,
    );
    if (outcome?.status === 'rejected') {
      // Saved by someone else since the form was opened: their text is shown, and Save again replaces it
      // with what was typed here (kept), as the notes dialog offers.
      const current = outcome.code === 'conflict' ? outcome.details : undefined;
      const theirs = typeof current?.currentValue === 'string' ? current.currentValue : undefined;
      const version = typeof current?.currentVersion === 'number' ? current.currentVersion : shown.version;
      const message = theirs === undefined ? outcome.message : `${outcome.message} ${overwriteHint}`;
      return render(ctx, { ...shown, version, theirs, errors: { _form: message } }, 409);
    }
    addFlash(ctx, changeNotice(ctx, outcome, `Saved the ${column} note.`, visible));
    ctx.redirect(`/competitors/${c.id}`);
  }),
];
