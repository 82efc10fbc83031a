/**
 * How a database write went, told by each path that writes (sessions, the instance heartbeat, the
 * command gateway and worker, the projection runner): nothing when it was stored, else its error. Each
 * path is given its own (`writeReporter` in infra/readiness.ts), so `/readyz` can say that the database
 * refuses writes (its disk full) although it still answers reads. Which errors count is the receiver's
 * business (`isRefusedWrite`), so a path reports every outcome as it is.
 */
export type WriteReport = (error?: unknown) => void;

/** Runs one write and tells `report` how it went; the write's result or error is passed on unchanged. */
export async function reportingWrite<T>(report: WriteReport | undefined, write: Promise<T>): Promise<T> {
  try {
    const result = await write;
    report?.();
    return result;
  } catch (error) {
    report?.(error);
    throw error;
  }
}
