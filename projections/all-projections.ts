import { auditLogProjection } from './audit-log/audit-log.projection.ts';
import { competitorListProjection } from './competitor-list/competitor-list.projection.ts';
import { noteHistoryProjection } from './note-history/note-history.projection.ts';
import type { Projection } from './projection.ts';
import { segmentBoardProjection } from './segment-board/segment-board.projection.ts';
import { userListProjection } from './user-list/user-list.projection.ts';

export const allProjections: readonly Projection[] = [
  competitorListProjection,
  segmentBoardProjection,
  userListProjection,
  noteHistoryProjection,
  auditLogProjection,
];
