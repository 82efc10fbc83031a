import { buildAssets } from '../../../infra/build/build.ts';

/** Builds the browser bundle once per Playwright run; every test server serves it from dist/assets. */
export default async function globalSetup(): Promise<void> {
  await buildAssets();
}
