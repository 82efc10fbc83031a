import { competitorEventDefinitions } from './competitor/events.ts';
import { operationsEventDefinitions } from './operations/events.ts';
import { orderingEventDefinitions } from './ordering/events.ts';
import { EventRegistry } from './registry.ts';
import { segmentEventDefinitions } from './segment/events.ts';
import { userEventDefinitions } from './user/events.ts';

/** Every event type Rivals has ever written. Reading any other type fails loudly. */
export const eventRegistry = new EventRegistry([
  ...competitorEventDefinitions,
  ...segmentEventDefinitions,
  ...userEventDefinitions,
  ...operationsEventDefinitions,
  ...orderingEventDefinitions,
]);
