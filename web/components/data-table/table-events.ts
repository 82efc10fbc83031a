import type { TableState } from './table-state.ts';

/** DOM events between the toolbar island and the table controller, dispatched on the table element. */
export const tableEvents = {
  /** The toolbar asks for a change: `detail` is a partial state. */
  request: 'datatable:request',
  /** The controller restored a state from history: `detail` is the full state. */
  restored: 'datatable:restored',
  /** A refresh was applied: `detail` is the full state. */
  updated: 'datatable:updated',
} as const;

export type TableStateDetail = TableState;
