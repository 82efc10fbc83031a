import type { NoteColumn } from '#events/competitor/fields.ts';
import { CommandKeyField, CsrfField, Field, FormError } from '../../components/form-field.tsx';
import { Layout } from '../layout.tsx';
import type { PageContext } from '../page-context.ts';
import { noteFormPath, noteLabels } from './competitor-table.tsx';

export interface NoteFormProps {
  page: PageContext;
  competitor: { id: string; name: string };
  column: NoteColumn;
  /** The note version the form was opened at (a later save by a colleague is a conflict, not lost). */
  version: number;
  value: string;
  /** After a conflict: the note as a colleague saved it meanwhile. */
  theirs?: string | undefined;
  errors: { value?: string; _form?: string };
}

/**
 * The note editor for browsers without JavaScript: the same words as the notes dialog (docs/behaviour.md
 * §5), posted as a form; with JavaScript the Edit buttons open the dialog instead.
 */
export function NoteFormPage({ page, competitor, column, version, value, theirs, errors }: NoteFormProps) {
  const title = `${noteLabels[column]} note of ${competitor.name}`;
  return (
    <Layout page={page} title={title}>
      <h1>Notes</h1>
      <p className="field__hint">{title}</p>
      <FormError error={errors._form} />
      <form method="post" action={noteFormPath(competitor.id, column)} className="form" noValidate>
        <CsrfField token={page.csrfToken} />
        <CommandKeyField />
        <input type="hidden" name="version" value={String(version)} />
        <Field
          name="value"
          label="Enter competitor notes"
          error={errors.value}
          autoFocus={Boolean(errors.value)}
        >
          {(a11y) => <textarea {...a11y} name="value" rows={8} defaultValue={value} required />}
        </Field>
        {theirs !== undefined && (
          <div className="field">
            <h2 className="field__hint">Their text</h2>
            <p className="note-card__text">{theirs || '(empty)'}</p>
          </div>
        )}
        <div className="form__actions">
          <button type="submit" className="button button--primary">
            Save
          </button>
          <a className="button" href={`/competitors/${competitor.id}`}>
            Cancel
          </a>
        </div>
      </form>
    </Layout>
  );
}
