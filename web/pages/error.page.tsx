import { Layout } from './layout.tsx';
import type { PageContext } from './page-context.ts';

export function ErrorPage({
  page,
  status,
  title,
  message,
}: {
  page: PageContext;
  status: number;
  title: string;
  message: string;
}) {
  return (
    <Layout page={page} title={title}>
      <section className="error-page">
        <p className="error-page__status">{status}</p>
        <h1>{title}</h1>
        <p>{message}</p>
        <p>
          <a href={status === 401 ? '/login' : '/competitors'}>
            {status === 401 ? 'Sign in' : 'Back to competitors'}
          </a>
        </p>
      </section>
    </Layout>
  );
}
