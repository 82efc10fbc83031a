import type { UserRow } from '#projections/user-list/user-list.queries.ts';
import { CommandKeyField, CsrfField, FormError, firstInvalid } from '../../components/form-field.tsx';
import { NewPasswordFields } from '../../components/new-password-fields.tsx';
import { Layout } from '../layout.tsx';
import type { PageContext } from '../page-context.ts';

/**
 * An admin sets another user's password (one who forgot theirs): the new one twice, no current one. Your
 * own is changed at /account, which asks for the current one.
 */
export function SetPasswordPage({
  page,
  user,
  errors,
  commandKey,
}: {
  page: PageContext;
  user: UserRow;
  errors: Record<string, string>;
  /** The key of a change sent but not confirmed: the form sent again with it finishes that change. */
  commandKey?: string | undefined;
}) {
  const focus = firstInvalid(errors, ['newPassword', 'repeatPassword']);
  const title = `Set a password for ${user.displayName}`;
  return (
    <Layout page={page} title={title}>
      <h1>{title}</h1>
      <dl className="battlecard__facts">
        <dt>Email</dt>
        <dd>{user.email}</dd>
        <dt>Role</dt>
        <dd>{user.role}</dd>
        <dt>Status</dt>
        <dd>{user.disabled ? 'Disabled: they cannot sign in until their account is enabled' : 'Active'}</dd>
      </dl>
      <FormError error={errors._form} />
      <form method="post" action={`/users/${user.id}/password`} className="form" noValidate>
        <CsrfField token={page.csrfToken} />
        <CommandKeyField value={commandKey} />
        <NewPasswordFields
          errors={errors}
          focus={focus}
          hint="At least 12 characters. Share it with them securely. Every browser signed in as them is signed out."
        />
        <div className="form__actions">
          <button type="submit" className="button button--primary">
            Set password
          </button>
          <a className="button" href="/users">
            Cancel
          </a>
        </div>
      </form>
    </Layout>
  );
}
