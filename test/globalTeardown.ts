import { runTeardowns } from './harness/teardown';

export default async function globalTeardown(): Promise<void> {
  await runTeardowns();
}
