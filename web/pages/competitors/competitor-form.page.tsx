import { threats, type CompetitorFieldName } from '#events/competitor/fields.ts';
import type { Segment } from '#projections/segment-board/segment-board.queries.ts';
import { CommandKeyField, CsrfField, Field, FormError, firstInvalid } from '../../components/form-field.tsx';
import { Layout } from '../layout.tsx';
import type { PageContext } from '../page-context.ts';

/**
 * The form as typed: every competitor field as text, the version the form was opened with and, on an
 * edit, the segment it showed (only a change from it moves the competitor).
 */
export type CompetitorFormValues = Record<CompetitorFieldName, string> & {
  expectedVersion?: string;
  baseSegmentId?: string;
};

export const emptyCompetitorForm: CompetitorFormValues = {
  name: '',
  website: '',
  segmentId: '',
  threat: 'medium',
  headquarters: '',
};

/** The value a conflicting field meets, as the form writes it, and its button's words. */
export interface TheirValue {
  value: string;
  label: string;
}

/**
 * After an edit conflict (decision 0021): a button that puts the other value into the field. Hidden until
 * the page's script (web/client/use-theirs.ts) makes it work; without it the user types the value shown.
 */
function UseTheirs(props: { field: CompetitorFieldName; theirs: TheirValue | undefined }) {
  if (props.theirs === undefined) return null;
  return (
    <button
      type="button"
      className="button field__action"
      data-use-theirs={props.field}
      data-value={props.theirs.value}
      aria-describedby={`field-${props.field}-error`}
      hidden
    >
      {props.theirs.label}
    </button>
  );
}

export function CompetitorFormPage(props: {
  page: PageContext;
  mode: 'new' | 'edit';
  action: string;
  values: CompetitorFormValues;
  errors: Record<string, string>;
  /** After an edit conflict: the value each conflicting field meets, and what its button says. */
  theirs?: Partial<Record<CompetitorFieldName, TheirValue>>;
  segments: Segment[];
  cancelHref: string;
}) {
  const { page, values, errors } = props;
  // What every field takes from the form's state: its error, the cursor, and after a conflict "Use theirs".
  const state = (field: CompetitorFieldName) => ({
    name: field,
    error: errors[field],
    autoFocus: focus === field,
    action: <UseTheirs field={field} theirs={props.theirs?.[field]} />,
  });
  const title = props.mode === 'new' ? 'Add competitor' : `Edit ${values.name}`;
  // The first field in error takes the cursor; with none, the name does.
  const focus = firstInvalid(errors, ['name', 'website', 'segmentId', 'threat', 'headquarters']) ?? 'name';
  return (
    <Layout page={page} title={title}>
      <h1>{title}</h1>
      <FormError error={errors._form} />
      <form method="post" action={props.action} className="form" noValidate data-keep-typed>
        <CsrfField token={page.csrfToken} />
        <CommandKeyField />
        {values.expectedVersion !== undefined && (
          <input type="hidden" name="expectedVersion" value={values.expectedVersion} />
        )}
        {values.baseSegmentId && <input type="hidden" name="baseSegmentId" value={values.baseSegmentId} />}
        {/* No `maxlength` on these fields: a browser counts it in UTF-16 units, so it would silently cut a
            name of emoji or other characters beyond the BMP at half the characters the server takes (it
            counts characters, code points: decision 0024). The server's message says what is too long. */}
        <Field {...state('name')} label="Name">
          {(a11y) => <input {...a11y} name="name" defaultValue={values.name} required />}
        </Field>
        <Field {...state('website')} label="Website" hint="Optional; an http:// or https:// address.">
          {(a11y) => (
            <input {...a11y} type="url" name="website" defaultValue={values.website} placeholder="https://" />
          )}
        </Field>
        <Field {...state('segmentId')} label="Segment">
          {(a11y) => (
            <select {...a11y} name="segmentId" defaultValue={values.segmentId} required>
              <option value="">Choose a segment…</option>
              {props.segments.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field {...state('threat')} label="Threat">
          {(a11y) => (
            <select {...a11y} name="threat" defaultValue={values.threat}>
              {threats.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field {...state('headquarters')} label="Headquarters" hint="Optional.">
          {(a11y) => <input {...a11y} name="headquarters" defaultValue={values.headquarters} />}
        </Field>
        <div className="form__actions">
          <button type="submit" className="button button--primary">
            {props.mode === 'new' ? 'Add competitor' : 'Save changes'}
          </button>
          <a className="button" href={props.cancelHref}>
            Cancel
          </a>
        </div>
      </form>
    </Layout>
  );
}
