import { roles } from '#events/user/fields.ts';
import { userDefaultSort, type UserRow } from '#projections/user-list/user-list.queries.ts';
import { DataTable, type Column } from '../../components/data-table/data-table.tsx';
import type { TableState } from '../../components/data-table/table-state.ts';
import { CommandKeyField, CsrfField, Field, FormError, firstInvalid } from '../../components/form-field.tsx';
import { formatTime } from '../../components/format.ts';
import { Layout } from '../layout.tsx';
import type { PageContext } from '../page-context.ts';

export interface UsersProps {
  page: PageContext;
  state: TableState;
  rows: UserRow[];
  total: number;
  lastPage: number;
}

function userColumns(page: PageContext): Column<UserRow>[] {
  return [
    { key: 'name', label: 'Name', sort: 'name', className: 'col-text', cell: (u) => u.displayName },
    { key: 'email', label: 'Email', sort: 'email', className: 'col-text', cell: (u) => u.email },
    {
      key: 'role',
      label: 'Role',
      sort: 'role',
      cell: (u) => (
        <form method="post" action={`/users/${u.id}/role`} className="inline-form">
          <CsrfField token={page.csrfToken} />
          <CommandKeyField />
          <label className="sr-only" htmlFor={`role-${u.id}`}>
            Role of {u.displayName}
          </label>
          <select id={`role-${u.id}`} name="role" defaultValue={u.role}>
            {roles.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>{' '}
          <button type="submit" className="button button--small">
            Change
          </button>
        </form>
      ),
    },
    { key: 'status', label: 'Status', cell: (u) => (u.disabled ? 'Disabled' : 'Active') },
    {
      key: 'created',
      label: 'Added',
      sort: 'created',
      cell: (u) => formatTime(u.createdAt.toISOString(), page.timeZone),
    },
    {
      key: 'actions',
      label: 'Actions',
      cell: (u) =>
        u.id === page.user?.id ? (
          <a className="field__hint" href="/account">
            You <span className="sr-only">(your account: change your password)</span>
          </a>
        ) : (
          <div className="row-actions">
            <a className="button button--small" href={`/users/${u.id}/password`}>
              Set password <span className="sr-only">of {u.displayName}</span>
            </a>
            <form method="post" action={`/users/${u.id}/${u.disabled ? 'enable' : 'disable'}`}>
              <CsrfField token={page.csrfToken} />
              <CommandKeyField />
              <button type="submit" className={`button button--small${u.disabled ? '' : ' button--danger'}`}>
                {u.disabled ? 'Enable' : 'Disable'} <span className="sr-only">{u.displayName}</span>
              </button>
            </form>
          </div>
        ),
    },
  ];
}

export function UsersTable({ page, state, rows, total, lastPage }: UsersProps) {
  return (
    <DataTable
      liveRefresh="never"
      defaultSort={userDefaultSort}
      id="users-table"
      path="/users"
      noun="users"
      state={state}
      columns={userColumns(page)}
      rows={rows}
      count={{ value: total, exact: true }}
      lastPage={lastPage}
      rowKey={(u) => u.id}
    />
  );
}

export function UsersPage(props: UsersProps) {
  return (
    <Layout page={props.page} title="Users">
      <div className="page-header">
        <h1>Users</h1>
        <a className="button button--primary" href="/users/new">
          Add user
        </a>
      </div>
      <UsersTable {...props} />
    </Layout>
  );
}

export interface NewUserValues {
  email: string;
  displayName: string;
  role: string;
}

export function NewUserPage({
  page,
  values,
  errors,
}: {
  page: PageContext;
  values: NewUserValues;
  errors: Record<string, string>;
}) {
  // Shown again with errors, the first field in error takes the cursor.
  const focus = firstInvalid(errors, ['email', 'displayName', 'role', 'password']);
  return (
    <Layout page={page} title="Add user">
      <h1>Add user</h1>
      <FormError error={errors._form} />
      <form method="post" action="/users" className="form" noValidate data-keep-typed>
        <CsrfField token={page.csrfToken} />
        <CommandKeyField />
        <Field name="email" label="Email" error={errors.email} autoFocus={focus === 'email'}>
          {(a11y) => <input {...a11y} type="email" name="email" defaultValue={values.email} required />}
        </Field>
        <Field name="displayName" label="Name" error={errors.displayName} autoFocus={focus === 'displayName'}>
          {(a11y) => (
            // No `maxlength`: a browser counts UTF-16 units and would cut emoji names short (decision 0024).
            <input {...a11y} name="displayName" defaultValue={values.displayName} required />
          )}
        </Field>
        <Field name="role" label="Role" error={errors.role} autoFocus={focus === 'role'}>
          {(a11y) => (
            <select {...a11y} name="role" defaultValue={values.role || 'viewer'}>
              {roles.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          name="password"
          label="Password"
          error={errors.password}
          hint="At least 12 characters. Share it with the person securely."
          autoFocus={focus === 'password'}
        >
          {(a11y) => (
            <input
              {...a11y}
              type="password"
              name="password"
              autoComplete="new-password"
              required
              minLength={12}
            />
          )}
        </Field>
        <div className="form__actions">
          <button type="submit" className="button button--primary">
            Add user
          </button>
          <a className="button" href="/users">
            Cancel
          </a>
        </div>
      </form>
    </Layout>
  );
}
