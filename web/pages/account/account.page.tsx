import { CommandKeyField, CsrfField, Field, FormError, firstInvalid } from '../../components/form-field.tsx';
import { NewPasswordFields } from '../../components/new-password-fields.tsx';
import { Layout } from '../layout.tsx';
import type { PageContext, SessionUser } from '../page-context.ts';

/** The fields of the change-password form, in the order they are shown. */
export const passwordFields = ['currentPassword', 'newPassword', 'repeatPassword'] as const;

/**
 * Your own account: who you are signed in as, and a form to set a new password (the first admin's is
 * random and printed once; nobody else can tell you yours).
 */
export function AccountPage({
  page,
  errors,
  commandKey,
}: {
  page: PageContext;
  errors: Record<string, string>;
  /** The key of a change sent but not confirmed: the form sent again with it finishes that change. */
  commandKey?: string | undefined;
}) {
  const user = page.user as SessionUser;
  // Shown again with errors, the first field in error takes the cursor.
  const focus = firstInvalid(errors, [...passwordFields]);
  return (
    <Layout page={page} title="Your account">
      <h1>Your account</h1>
      <dl className="battlecard__facts">
        <dt>Name</dt>
        <dd>{user.name}</dd>
        <dt>Email</dt>
        <dd>{user.email}</dd>
        <dt>Role</dt>
        <dd>{user.role}</dd>
      </dl>
      <h2>Change your password</h2>
      <FormError error={errors._form} />
      {/* No fields are kept when the form comes back with an error: the browser never gets a password back. */}
      <form method="post" action="/account/password" className="form" noValidate>
        <CsrfField token={page.csrfToken} />
        <CommandKeyField value={commandKey} />
        {/* For password managers: the account the new password belongs to. */}
        <input type="hidden" name="username" autoComplete="username" value={user.email} />
        <Field
          name="currentPassword"
          label="Current password"
          error={errors.currentPassword}
          autoFocus={focus === 'currentPassword'}
        >
          {(a11y) => (
            <input
              {...a11y}
              type="password"
              name="currentPassword"
              autoComplete="current-password"
              required
            />
          )}
        </Field>
        <NewPasswordFields
          errors={errors}
          focus={focus}
          hint="At least 12 characters. Browsers signed in as you elsewhere are signed out; this one stays."
        />
        <div className="form__actions">
          <button type="submit" className="button button--primary">
            Change password
          </button>
        </div>
      </form>
    </Layout>
  );
}
