/** One function per stream name, so a stream is spelled in exactly one place. */
export const competitorStream = (competitorId: string): string => `competitor-${competitorId}`;

/** One stream per case-folded competitor name: claims keep names unique among live competitors. */
export const competitorNameStream = (name: string): string =>
  `competitor-name-${name.trim().toLocaleLowerCase('en-US')}`;

/** Drag-sorting: every reorder of the ranking and the board; its version is what a drop `expect`s. */
export const orderingStream = (): string => 'ordering';

export const segmentsStream = (): string => 'segments';

/** All user management lives in one stream: few writes, and email uniqueness is decided in one place. */
export const usersStream = (): string => 'users';

/** Operator actions: replays, rebuilds, seeding. */
export const operationsStream = (): string => 'operations';
