import { auditLogProjection } from './audit-log/audit-log.projection.ts';
import { competitorListProjection } from './competitor-list/competitor-list.projection.ts';
import { noteHistoryProjection } from './note-history/note-history.projection.ts';
import { segmentBoardProjection } from './segment-board/segment-board.projection.ts';
import { userListProjection } from './user-list/user-list.projection.ts';

/** Every projection the app runs; a new one is added here and nowhere else. */
export const allProjections = [
  competitorListProjection,
  segmentBoardProjection,
  userListProjection,
  noteHistoryProjection,
  auditLogProjection,
] as const;

/** The name of a projection in the list: a read-your-writes wait on a misspelled name is a type error. */
export type ProjectionName = (typeof allProjections)[number]['name'];
