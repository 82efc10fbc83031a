import { createElement } from 'react';
import { hydrateRoot } from 'react-dom/client';
import { installActionConfirmation, installAutoRefresh } from './confirm-action.ts';
import { installDeleteConfirmation } from './confirm-delete.ts';
import { installDataTables } from './data-table.ts';
import { installFreshKeys } from './fresh-keys.ts';
import { islands } from './islands.ts';
import { installNotesDialog } from './notes-dialog.ts';
import { installPrint } from './print.ts';
import { connectRealtime } from './realtime.ts';
import { installSortableLists } from './sortable-lists.ts';
import { rememberTimeZone } from './time-zone-cookie.ts';
import { installUnsentForms } from './unsent-forms.ts';
import { installUseTheirs } from './use-theirs.ts';

/** Hydrates every server-rendered island with the props it was rendered with. */
async function hydrateIslands(): Promise<void> {
  const roots = [...document.querySelectorAll<HTMLElement>('[data-island]')];
  await Promise.all(
    roots.map(async (root) => {
      const load = islands[root.dataset.island ?? ''];
      if (!load) return console.error('Unknown island:', root.dataset.island);
      const Component = await load();
      const props = JSON.parse(root.dataset.props ?? '{}') as object;
      hydrateRoot(root, createElement(Component, props as never));
      root.dataset.hydrated = 'true';
    }),
  );
}

rememberTimeZone();
installFreshKeys();
installDataTables();
installDeleteConfirmation();
installActionConfirmation();
installAutoRefresh();
installPrint();
installNotesDialog();
installSortableLists();
installUnsentForms();
installUseTheirs();
void connectRealtime();
void hydrateIslands().then(() => document.documentElement.setAttribute('data-ready', 'true'));
