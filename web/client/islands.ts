import type { ComponentType } from 'react';

/** Island name → lazy module. Each island's code is a separate chunk, loaded only where it appears. */
export const islands: Record<string, () => Promise<ComponentType<never>>> = {
  'table-toolbar': async () =>
    (await import('./islands/table-toolbar.tsx')).TableToolbar as ComponentType<never>,
};
