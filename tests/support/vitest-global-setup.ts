import { buildAssets } from '#infra/build/build.ts';

/** The web suites serve the real browser bundle: build it once per run. */
export default async function setup(): Promise<void> {
  await buildAssets();
}
