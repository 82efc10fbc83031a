import { Field } from './form-field.tsx';

/**
 * A new password, typed twice (/account, and an admin's "Set password" on /users). Never filled in: a form
 * that comes back with an error does not send a password back to the browser.
 */
export function NewPasswordFields({
  errors,
  focus,
  hint,
}: {
  errors: Record<string, string>;
  /** The field that takes the cursor (the first in error). */
  focus: string | undefined;
  hint: string;
}) {
  return (
    <>
      <Field
        name="newPassword"
        label="New password"
        error={errors.newPassword}
        hint={hint}
        autoFocus={focus === 'newPassword'}
      >
        {(a11y) => (
          <input
            {...a11y}
            type="password"
            name="newPassword"
            autoComplete="new-password"
            required
            minLength={12}
          />
        )}
      </Field>
      <Field
        name="repeatPassword"
        label="New password again"
        error={errors.repeatPassword}
        autoFocus={focus === 'repeatPassword'}
      >
        {(a11y) => (
          <input {...a11y} type="password" name="repeatPassword" autoComplete="new-password" required />
        )}
      </Field>
    </>
  );
}
