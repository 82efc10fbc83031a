import type { ReactNode } from 'react';

/** A labelled input with its error below it, tied together for screen readers. */
export function Field(props: {
  name: string;
  label: string;
  error?: string;
  hint?: string;
  /** The control takes the cursor when the page loads (see firstInvalid). */
  autoFocus?: boolean;
  /** Shown after the error: something to do about it (the edit form's "Use theirs"). */
  action?: ReactNode;
  children: (a11y: {
    id: string;
    'aria-invalid': boolean | undefined;
    'aria-describedby': string | undefined;
    autoFocus: boolean | undefined;
  }) => ReactNode;
}) {
  const id = `field-${props.name}`;
  const describedBy =
    [props.error ? `${id}-error` : '', props.hint ? `${id}-hint` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field${props.error ? ' field--invalid' : ''}`}>
      <label htmlFor={id}>{props.label}</label>
      {props.children({
        id,
        'aria-invalid': props.error ? true : undefined,
        'aria-describedby': describedBy,
        autoFocus: props.autoFocus || undefined,
      })}
      {props.hint && (
        <p className="field__hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      {props.error && (
        <p className="field__error" id={`${id}-error`}>
          {props.error}
        </p>
      )}
      {props.action}
    </div>
  );
}

/**
 * The field a form shown again with errors puts the cursor in: the first one in error, in the order the
 * form shows them (so the user lands on what to correct, not on a field that was fine).
 */
export const firstInvalid = (errors: Record<string, string>, order: readonly string[]): string | undefined =>
  order.find((name) => errors[name]);

/** An error about the whole form (not one field), e.g. a refusal because the user's role changed. */
export const FormError = ({ error }: { error: string | undefined }) =>
  error ? (
    <p className="flash flash--error" role="alert">
      {error}
    </p>
  ) : null;

export const CsrfField = ({ token }: { token: string }) => <input type="hidden" name="_csrf" value={token} />;

/**
 * A fresh idempotency key per rendered form (see web/idempotency.server.ts): submitting the same form
 * twice, or again after a lost answer, is one change. Re-rendering (after a rejection) gives a new key.
 */
export const CommandKeyField = ({ value }: { value?: string | undefined } = {}) => (
  <input type="hidden" name="_idempotency_key" value={value ?? crypto.randomUUID()} />
);
