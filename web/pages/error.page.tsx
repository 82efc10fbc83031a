import { Layout } from './layout.tsx';
import type { PageContext } from './page-context.ts';

export function ErrorPage({
  page,
  status,
  title,
  message,
  signInNext,
}: {
  page: PageContext;
  status: number;
  title: string;
  message: string;
  /** For a 401: the page to come back to after signing in. */
  signInNext?: string;
}) {
  return (
    <Layout page={page} title={title}>
      <section className="error-page" data-session-ended={status === 401 || undefined}>
        <p className="error-page__status">{status}</p>
        <h1>{title}</h1>
        <p>{message}</p>
        <p>
          <a
            href={
              status !== 401
                ? '/competitors'
                : signInNext
                  ? `/login?next=${encodeURIComponent(signInNext)}`
                  : '/login'
            }
          >
            {status === 401 ? 'Sign in' : 'Back to competitors'}
          </a>
        </p>
      </section>
    </Layout>
  );
}
