import { z } from 'zod';
import { email, displayName, role } from '#events/user/fields.ts';
import { can } from '#events/user/permissions.ts';
import { NotFoundError, ValidationError } from '#infra/errors.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '#infra/passwords.ts';
import { findUser, listUsers, userSortColumns } from '#projections/user-list/user-list.queries.ts';
import { createAccount } from '#services/user/accounts.ts';
import { addFlash } from '../../auth/flash.server.ts';
import { endSessionsDisabledBy } from '../../auth/sessions.server.ts';
import { renderTableRoute } from '../../table-route.server.tsx';
import { changeNotice, dispatchAndWaitVisible, unconfirmedChange } from '../../commands.server.ts';
import { idempotencyKey } from '../../idempotency.server.ts';
import { pageContext, renderHtml } from '../../render.server.tsx';
import { route, type RouteDef } from '../../routing.server.ts';
import { parseForm } from '../../zod-form.server.ts';
import type { SessionUser } from '../page-context.ts';
import { NewUserPage, UsersPage, UsersTable } from './users.page.tsx';

const newUserForm = z.object({
  email,
  displayName,
  role,
  password: z
    .string()
    .min(PASSWORD_MIN_LENGTH, `Password must be at least ${PASSWORD_MIN_LENGTH} characters.`)
    .max(PASSWORD_MAX_LENGTH, `Password must be at most ${PASSWORD_MAX_LENGTH} characters.`),
});

const newUserFields = ['email', 'displayName', 'role', 'password'] as const;

/** A UUID: checked by the router before any handler runs (web/input.server.ts). */
const userId = (ctx: { params: Record<string, string | undefined> }) => ctx.params.id ?? '';

export const userRoutes: RouteDef[] = [
  route('GET', '/users', 'users.view', (ctx, deps) =>
    renderTableRoute(ctx, {
      sortColumns: userSortColumns,
      reads: deps.searchReads,
      query: (query, db) => listUsers(db, query, deps.searchPages),
      page: (props) => <UsersPage {...props} />,
      table: (props) => <UsersTable {...props} />,
    }),
  ),

  route('GET', '/users/new', 'users.manage', (ctx) => {
    renderHtml(
      ctx,
      <NewUserPage
        page={pageContext(ctx)}
        values={{ email: '', displayName: '', role: 'viewer' }}
        errors={{}}
      />,
    );
  }),

  route('POST', '/users', 'users.manage', async (ctx, deps) => {
    // A field sent twice is refused by name: read as empty, it answered "Name is required." (parseForm).
    const parsed = parseForm(ctx.request.body, newUserFields, newUserForm, 'nobody was added');
    // The values shown again: never the password.
    const values = {
      email: parsed.values.email,
      displayName: parsed.values.displayName,
      role: parsed.values.role,
    };
    const rerender = (errors: Record<string, string>) =>
      renderHtml(ctx, <NewUserPage page={pageContext(ctx)} values={values} errors={errors} />, 400);
    if (parsed.errors) return rerender(parsed.errors);
    // Sign-in reads the user list: until it shows the new user, they cannot sign in yet.
    let visible = false;
    const { outcome } = await createAccount(
      deps.db.pool,
      async (command) => {
        const result = await dispatchAndWaitVisible(ctx, deps, command, ['user-list']);
        visible = result.visible;
        return result.outcome;
      },
      { ...parsed.data, userId: idempotencyKey(ctx) },
    );
    if (outcome?.status === 'rejected') return rerender(outcome.fields ?? { _form: outcome.message });
    const { displayName: name, role: as } = parsed.data;
    addFlash(
      ctx,
      outcome
        ? {
            kind: 'success',
            text: visible
              ? `${name} can now sign in as ${as}.`
              : `${name} is added as ${as}; they can sign in in a moment, once the user list shows them.`,
          }
        : { kind: 'info', text: unconfirmedChange(ctx) },
    );
    ctx.redirect('/users');
  }),

  route('POST', '/users/:id/role', 'users.manage', async (ctx, deps) => {
    const id = userId(ctx);
    const parsed = role.safeParse((ctx.request.body as Record<string, unknown> | undefined)?.role);
    if (!parsed.success) throw new ValidationError('Role must be viewer, editor or admin.');
    const user = await findUser(deps.db.pool, id);
    if (!user) throw new NotFoundError('No such user.');
    const { outcome, visible } = await dispatchAndWaitVisible(
      ctx,
      deps,
      { type: 'ChangeUserRole', payload: { userId: id, role: parsed.data } },
      ['user-list'],
    );
    addFlash(ctx, changeNotice(ctx, outcome, `${user.displayName} is now ${parsed.data}.`, visible));
    // An admin who gave up their own admin role may no longer see /users: they go where they may.
    const gaveUpUsers =
      id === (ctx.state.user as SessionUser).id &&
      outcome?.status === 'accepted' &&
      !can(parsed.data, 'users.view');
    ctx.redirect(gaveUpUsers ? '/competitors' : '/users');
  }),

  ...(['disable', 'enable'] as const).map((verb) =>
    route('POST', `/users/:id/${verb}`, 'users.manage', async (ctx, deps) => {
      const id = userId(ctx);
      // The page offers no Disable on your own row: disabling yourself ends your session mid-task.
      if (verb === 'disable' && id === (ctx.state.user as SessionUser).id)
        throw new ValidationError('You cannot disable your own account. Ask another admin to do it.');
      const user = await findUser(deps.db.pool, id);
      if (!user) throw new NotFoundError('No such user.');
      // A disabled account's sessions are dead (each is deleted when next seen), but one nobody used
      // while it was disabled would come back to life with the account: the cookie it was disabled for.
      if (verb === 'enable' && user.disabled)
        await deps.db.pool.query('DELETE FROM sessions WHERE user_id = $1', [id]);
      const type = verb === 'disable' ? 'DisableUser' : 'EnableUser';
      const { outcome, visible } = await dispatchAndWaitVisible(
        ctx,
        deps,
        { type, payload: { userId: id } },
        ['user-list'],
      );
      // The account is disabled whatever happens here: a failure must not answer "nothing was changed". A
      // session left behind is dead all the same (every request re-reads the flag; enabling deletes it).
      if (verb === 'disable' && outcome?.status === 'accepted')
        await endSessionsDisabledBy(
          deps.db.pool,
          id,
          outcome.positions.length ? Math.max(...outcome.positions) : undefined,
        ).catch((error: unknown) =>
          deps.log.warn({ err: error, userId: id }, 'disable: could not delete the sessions of the account'),
        );
      addFlash(ctx, changeNotice(ctx, outcome, `${user.displayName} is ${verb}d.`, visible));
      ctx.redirect('/users');
    }),
  ),
];
