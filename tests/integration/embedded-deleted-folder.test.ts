import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { StorageMissingError } from '#infra/db/database.ts';
import { loadConfig } from '#infra/config.ts';
import { bootstrapContent } from '#services/bootstrap/bootstrap.ts';
import { stopAll, tempDataDir } from '#tests/support/app-process.ts';
import { addCompetitorCommand, silentLog, testActor } from '#tests/support/runtime-pieces.ts';
import { until } from '#tests/support/until.ts';
import { startRuntime, type Runtime } from '#web/runtime.server.ts';

/**
 * The embedded runtime as the server wires it (gateway, in-process bus, worker, projections) on a real
 * data folder, deleted between a command's admission and its handling: the window the per-request
 * storage guard cannot see (decision 0012).
 */
let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
  await stopAll();
});

describe('a data folder deleted under the embedded runtime', () => {
  it('a command admitted before the folder was deleted and handled after is never answered "saved"', async () => {
    const dataDir = await tempDataDir();
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const started = (runtime = await startRuntime(config, silentLog, { purpose: 'test' }));
    await bootstrapContent(started.store, started.route, { demoData: false });
    const command = addCompetitorCommand('Initech');
    const commandId = 'admitted-before-the-folder-went';

    // The embedded pool has one connection, taken in turn: the gateway's admission asks for it first
    // (synchronously, inside `dispatch`), this test second, and the worker only after the command is
    // on the bus, so it is handled once the test lets go, after the folder is gone.
    const dispatched = started.gateway.dispatch(command, testActor, { commandId, timeoutMs: 2_000 });
    const held = await started.db.pool.connect();
    try {
      const { rows } = await held.query('SELECT 1 FROM command_inbox WHERE command_id = $1', [commandId]);
      expect(rows).toHaveLength(1);
      await rm(dataDir, { recursive: true, force: true });
    } finally {
      held.release();
    }

    // PGlite takes the write into the files it still holds open; nothing of it will ever be read again.
    await expect(dispatched).rejects.toBeInstanceOf(StorageMissingError);
    // The worker (and the projection runner, which meets the deleted files too) say it to /readyz.
    await until(
      () => 'database (writes)' in started.readiness.current(),
      'the worker to report that it cannot store',
    );
    expect(started.readiness.current()['database (writes)']?.state).toMatch(
      /^unavailable: the (server's data folder is missing|database cannot read its files)$/,
    );
  }, 60_000);
});
