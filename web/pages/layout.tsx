import type { ReactNode } from 'react';
import { can, type Action } from '#events/user/permissions.ts';
import type { PageContext } from './page-context.ts';

interface NavItem {
  href: string;
  label: string;
  action: Action;
}

/** The screens of PRODUCT.md, each shown to the roles that may open it. */
export const navigation: NavItem[] = [
  { href: '/competitors', label: 'Competitors', action: 'competitors.view' },
  { href: '/ranking', label: 'Ranking', action: 'ranking.view' },
  { href: '/segments', label: 'Segments', action: 'segments.view' },
  { href: '/audit', label: 'Audit log', action: 'audit.view' },
  { href: '/users', label: 'Users', action: 'users.view' },
  { href: '/ops', label: 'Operations', action: 'ops.view' },
];

export function Layout({ page, title, children }: { page: PageContext; title: string; children: ReactNode }) {
  const { user } = page;
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · Rivals`}</title>
        <meta name="csrf-token" content={page.csrfToken} />
        {user && <meta name="user-id" content={user.id} />}
        {page.live && <meta name="live-position" content={page.live.list} />}
        {page.live?.audit !== undefined && <meta name="live-audit" content={page.live.audit} />}
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={page.assets.css} />
        <script type="module" src={page.assets.js} nonce={page.nonce} />
      </head>
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <header className="site-header">
          <a className="brand" href="/competitors">
            Rivals
          </a>
          {user && (
            <nav aria-label="Main">
              <ul>
                {navigation
                  .filter((item) => can(user.role, item.action))
                  .map((item) => (
                    <li key={item.href}>
                      <a href={item.href} aria-current={page.path.startsWith(item.href) ? 'page' : undefined}>
                        {item.label}
                      </a>
                    </li>
                  ))}
              </ul>
            </nav>
          )}
          {user && (
            <form method="post" action="/logout" className="site-header__user">
              <a
                href="/account"
                title="Your account"
                aria-current={page.path === '/account' ? 'page' : undefined}
              >
                {user.name} <span className="role-badge">{user.role}</span>
              </a>
              <input type="hidden" name="_csrf" value={page.csrfToken} />
              <button type="submit" className="button button--ghost">
                Sign out
              </button>
            </form>
          )}
        </header>
        <main id="main">
          <div className="flash-messages" aria-live="polite" data-notices>
            {page.flash.map((f, i) => (
              <p key={i} className={`flash flash--${f.kind}`} role={f.kind === 'error' ? 'alert' : 'status'}>
                {f.text}
              </p>
            ))}
          </div>
          {children}
        </main>
      </body>
    </html>
  );
}
