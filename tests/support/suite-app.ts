import { afterAll, beforeAll } from 'vitest';
import type { BackendKind } from './environment.ts';
import { startTestApp, type TestApp } from './test-app.ts';
import type { TestClient } from './test-client.ts';

/**
 * Registers the usual suite lifecycle: before the suite's tests, the real app on a fresh database and an
 * admin client signed in to it (handed to `started`); after them, the app closed.
 */
export function withSuiteApp(backend: BackendKind, started: (app: TestApp, admin: TestClient) => void): void {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await startTestApp(backend);
    started(app, await app.client('admin'));
  });
  afterAll(async () => {
    await app?.close();
  });
}
