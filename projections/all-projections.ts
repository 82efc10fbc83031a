import { competitorListProjection } from './competitor-list/competitor-list.projection.ts';
import type { Projection } from './projection.ts';
import { segmentBoardProjection } from './segment-board/segment-board.projection.ts';
import { userListProjection } from './user-list/user-list.projection.ts';

export const allProjections: readonly Projection[] = [
  competitorListProjection,
  segmentBoardProjection,
  userListProjection,
];
