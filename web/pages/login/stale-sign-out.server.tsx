import type { Context } from 'koa';
import { CsrfField } from '../../components/form-field.tsx';
import type { StaleFormAnswers } from '../../auth/csrf.server.ts';
import { isXhr, pageContext, renderHtml } from '../../render.server.tsx';
import { Layout } from '../layout.tsx';
import type { PageContext } from '../page-context.ts';

export const STALE_SIGN_OUT =
  'This page was opened before this browser last signed in, so its Sign out button was out of date and you are still signed in.';

function SignOutPage({ page }: { page: PageContext }) {
  return (
    <Layout page={page} title="Sign out?">
      <section className="error-page">
        <h1>Sign out?</h1>
        <p>{STALE_SIGN_OUT}</p>
        <form method="post" action="/logout">
          <CsrfField token={page.csrfToken} />
          <button type="submit" className="button">
            Sign out
          </button>
        </form>
      </section>
    </Layout>
  );
}

/**
 * A Sign out sent from a page older than this browser's current sign-in (a tab left open, then signed in
 * again): nothing ties that page's token to the new session, so it signs nobody out (a token that does not
 * match never makes a change), but it is answered with the question it asked, and a button that works,
 * instead of "reload the page". Signed out already, or sent as a call: the usual answer (false).
 */
export function staleSignOutForms(): StaleFormAnswers {
  return {
    '/logout': (ctx: Context) => {
      if (!ctx.state.user || isXhr(ctx)) return false;
      renderHtml(ctx, <SignOutPage page={pageContext(ctx)} />, 403);
      return true;
    },
  };
}
