import type { CompetitorNameEvent } from '#events/competitor/events.ts';
import { assertNever } from '#infra/assert-never.ts';
import { accept, reject, type Decider } from '../decider.ts';

/**
 * One stream per case-folded name keeps names unique among live competitors without a global lock:
 * adding or renaming claims the name first; deleting or renaming away releases it.
 */
export type CompetitorNameCommand =
  | { type: 'ClaimCompetitorName'; name: string; competitorId: string }
  | { type: 'ReleaseCompetitorName'; name: string; competitorId: string };

export interface CompetitorNameState {
  holder: string | null;
}

export const competitorNameDecider: Decider<CompetitorNameCommand, CompetitorNameEvent, CompetitorNameState> =
  {
    initialState: () => ({ holder: null }),

    evolve(_state, event) {
      switch (event.type) {
        case 'CompetitorNameClaimed':
          return { holder: event.data.competitorId };
        case 'CompetitorNameReleased':
          return { holder: null };
        default:
          return assertNever(event);
      }
    },

    decide(command, state) {
      const { name, competitorId } = command;
      switch (command.type) {
        case 'ClaimCompetitorName':
          if (state.holder === competitorId) return accept();
          if (state.holder !== null) {
            const message = `A competitor named “${name}” already exists.`;
            return reject('conflict', message, { fields: { name: message } });
          }
          return accept({ type: 'CompetitorNameClaimed', data: { name, competitorId } });
        case 'ReleaseCompetitorName':
          if (state.holder !== competitorId) return accept();
          return accept({ type: 'CompetitorNameReleased', data: { name, competitorId } });
        default:
          return assertNever(command);
      }
    },
  };
