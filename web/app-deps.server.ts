import type { Config } from '#infra/config.ts';
import type { Database } from '#infra/db/database.ts';
import type { Logger } from '#infra/logger.ts';
import type { Readiness } from '#infra/readiness.ts';
import type { Redis } from '#infra/redis.ts';
import type { CommandBus } from '#events/bus/command-bus.ts';
import type { CommandInbox } from '#events/store/command-inbox.ts';
import type { DeadLetterStore } from '#events/store/dead-letters.ts';
import type { EventStore } from '#events/store/event-store.ts';
import type { SearchPageCache } from '#projections/search-pages.ts';
import type { ProjectionWatcher } from '#projections/watcher.ts';
import type { CommandGateway } from '#services/command-gateway.ts';
import type { Assets } from './assets/assets.server.ts';
import type { LoginLimiter } from './auth/login-limiter.server.ts';
import type { SessionOptions } from './auth/sessions.server.ts';
import type { SearchReads } from './search-reads.server.ts';

/** What the web app is built from; the entry point wires it, tests wire their own. */
export interface AppDeps {
  config: Config;
  log: Logger;
  db: Database;
  store: EventStore;
  gateway: CommandGateway;
  bus: CommandBus;
  /** Every accepted command until it is handled (the backlog /ops and /metrics show). */
  inbox: CommandInbox;
  /** What the workers gave up on (/ops lists it; Retry and Discard act on it). */
  deadLetters: DeadLetterStore;
  watcher: ProjectionWatcher;
  redis: Redis | undefined;
  assets: Assets;
  sessionSecret: string;
  sessions: SessionOptions;
  loginLimiter: LoginLimiter;
  /** A search's sorted matches, for its pages past the first (kept per table version). */
  searchPages: SearchPageCache;
  /** Searched reads take turns and are bounded in time (made by `createApp`, docs/decisions/0026). */
  searchReads: SearchReads;
  /** Problems this process's background work reports (bus, database); absent in bare test apps. */
  readiness?: Readiness;
}
