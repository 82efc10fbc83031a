import { CommandKeyField, CsrfField, Field } from '../../components/form-field.tsx';
import { Layout } from '../layout.tsx';
import type { PageContext } from '../page-context.ts';

export function LoginPage({
  page,
  email,
  next,
  error,
}: {
  page: PageContext;
  email: string;
  next: string;
  error?: string;
}) {
  return (
    <Layout page={page} title="Sign in">
      <section className="login">
        <h1>Sign in to Rivals</h1>
        {error && (
          <p className="flash flash--error" role="alert">
            {error}
          </p>
        )}
        <form method="post" action="/login" className="form">
          <CsrfField token={page.csrfToken} />
          {/* Sent again with a double click or a retried POST: one session for both (startSession). */}
          <CommandKeyField />
          <input type="hidden" name="next" value={next} />
          {/* The cursor where typing goes next: the email, or after a refused attempt (the email kept) the
              password again. */}
          <Field name="email" label="Email" autoFocus={email === ''}>
            {(a11y) => (
              <input
                {...a11y}
                type="email"
                name="email"
                autoComplete="username"
                required
                defaultValue={email}
              />
            )}
          </Field>
          <Field name="password" label="Password" autoFocus={email !== ''}>
            {(a11y) => (
              <input {...a11y} type="password" name="password" autoComplete="current-password" required />
            )}
          </Field>
          <div className="form__actions">
            <button type="submit" className="button button--primary">
              Sign in
            </button>
          </div>
        </form>
      </section>
    </Layout>
  );
}
