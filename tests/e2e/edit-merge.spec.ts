import { randomBytes } from 'node:crypto';
import { expect, test } from './support/fixtures.ts';
import { addCompetitor, deleteCompetitor } from './support/competitors.ts';
import { signIn } from './support/sign-in.ts';

/* Two people edit one competitor at once (decision 0021): a three-way merge, and only real overlaps asked. */

test.setTimeout(90_000);

test('an edit form opened before a colleague saved takes their other changes and asks only where both changed a field', async ({
  browser,
  server,
}) => {
  const admin = await browser.newContext();
  // Bob reads times on Tokyo's clock; Ada is a second user, named by her display name.
  const bob = await browser.newContext({ timezoneId: 'Asia/Tokyo' });
  const a = await admin.newPage();
  const b = await bob.newPage();
  let id = '';
  try {
    await signIn(a, server.url);
    const suffix = randomBytes(3).toString('hex');
    const ada = `Ada ${suffix}`;
    const email = `ada-${suffix}@rivals.test`;
    const password = 'ada-editor-password-0123';
    await a.goto(`${server.url}/users/new`);
    await a.getByLabel('Email').fill(email);
    await a.getByLabel('Name').fill(ada);
    await a.getByLabel('Role').selectOption('editor');
    await a.getByLabel('Password').fill(password);
    await a.getByRole('button', { name: 'Add user' }).click();
    await expect(a).toHaveURL(`${server.url}/users`);
    const name = `Merge Co ${suffix}`;
    id = await addCompetitor(a, server.url, name);
    await a.getByRole('button', { name: 'Sign out' }).click();
    await signIn(a, server.url, email, password);
    await signIn(b, server.url);

    // Both open the form; Bob starts typing first, Ada saves first.
    await b.goto(`${server.url}/competitors/${id}/edit`);
    await b.getByLabel('Name').fill(`${name} Renamed`);
    await b.getByLabel('Threat').selectOption('low');
    await a.goto(`${server.url}/competitors/${id}/edit`);
    await a.getByLabel('Headquarters').fill('Lisbon');
    await a.getByLabel('Threat').selectOption('high');
    await a.getByRole('button', { name: 'Save changes' }).click();
    await expect(a).toHaveURL(`${server.url}/competitors/${id}`);

    // Bob's save: the threat both changed is asked about; his name and her headquarters are taken in.
    await b.getByRole('button', { name: 'Save changes' }).click();
    await expect(b.getByText(`${ada} changed this competitor after you opened this form.`)).toBeVisible();
    await expect(b.getByLabel('Name')).toHaveValue(`${name} Renamed`);
    await expect(b.getByLabel('Headquarters')).toHaveValue('Lisbon');
    await expect(b.getByLabel('Threat')).toHaveValue('low');
    const marked = b.locator('#field-threat-error');
    await expect(marked).toHaveText(
      new RegExp(
        `^${ada} changed this to “high” \\(\\d{1,2} \\w{3,4} \\d{4}, \\d{2}:\\d{2} GMT\\+9\\); keep yours or use theirs\\.$`,
      ),
    );
    await expect(b.getByLabel('Threat')).toHaveAttribute('aria-invalid', 'true');

    // One "Use theirs", for the one field both changed; it puts Ada's value in, and the form's version
    // moved on, so this send goes through.
    const useTheirs = b.getByRole('button', { name: 'Use theirs' });
    await expect(useTheirs).toHaveCount(1);
    await useTheirs.click();
    await expect(b.getByLabel('Threat')).toHaveValue('high');
    await expect(b.getByLabel('Threat')).toBeFocused();
    await b.getByRole('button', { name: 'Save changes' }).click();
    await expect(b).toHaveURL(`${server.url}/competitors/${id}`);
    const facts = b.locator('#battlecard .battlecard__facts');
    await expect(facts).toContainText('high');
    await expect(facts).toContainText('Lisbon');
    await expect(b.getByRole('heading', { name: `${name} Renamed` })).toBeVisible();
  } finally {
    if (id) await deleteCompetitor(b, server.url, id);
    await admin.close();
    await bob.close();
  }
});
