import { setFlagsFromString } from 'node:v8';

/**
 * How the worker process holds memory, set on purpose (issue 33; the figures are in docs/performance.md,
 * "Worker memory").
 *
 * Young generation (V8's new space). Left to V8 on Node 24, each heap's new space grows under allocation
 * to 2 × 64 MiB semi-spaces and keeps them: the soak measured the main thread's and the sessions workflow
 * thread's new spaces at 128 MiB each a few minutes into the load, most of the ~330 MiB "warm-up step"
 * of the worker's RSS that never came back. Workflow threads replay small activations and keep almost
 * nothing between them, so a small young generation costs them a few more scavenges; the main thread
 * (activities, the Temporal core's gRPC and protobuf, pg) allocates more and keeps a larger one. The soak
 * measured the same worker CPU per session either way (47.0 vs 46.1 ms).
 *
 * Malloc arenas. glibc gives each thread that allocates its own arena (up to 8 per core) and keeps what
 * is freed in it; the worker runs the Temporal core's threads, the workflow threads and libuv's pool, so
 * after a load about 100 MiB sat in arenas. Two arenas hold the same work.
 */
export const WORKFLOW_THREAD_SEMI_SPACE_MIB = 2;
export const WORKER_MAIN_THREAD_SEMI_SPACE_MIB = 16;

/**
 * Node flags the worker process starts with: the main thread's heap is sized when the process starts, so
 * only a launch flag reaches it (package.json `worker`, dev/start.ts, docker-compose.yml, the benches).
 */
export const WORKER_NODE_FLAGS: readonly string[] = [
  `--max-semi-space-size=${WORKER_MAIN_THREAD_SEMI_SPACE_MIB}`,
];

/** Environment the worker process starts with: glibc reads it once, before any code of ours runs. */
export const WORKER_PROCESS_ENV = { MALLOC_ARENA_MAX: '2' } as const satisfies NodeJS.ProcessEnv;

/**
 * Sizes the young generation of every V8 isolate this process creates from now on: the workflow threads
 * that `Worker.create` starts (one per task queue). V8 reads the flag when an isolate's heap is set up,
 * so the main thread's heap, already running, keeps what it was started with.
 */
export function limitYoungGenerationOfNewThreads(semiSpaceMiB = WORKFLOW_THREAD_SEMI_SPACE_MIB): void {
  setFlagsFromString(`--max-semi-space-size=${semiSpaceMiB}`);
}

/** The memory settings this process was started without (WORKER_NODE_FLAGS, WORKER_PROCESS_ENV). */
export function missingMemorySettings(
  execArgv: readonly string[] = process.execArgv,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  const flags = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
  const missing: string[] = [];
  if (!flags.some((flag) => flag.startsWith('--max-semi-space-size'))) missing.push(...WORKER_NODE_FLAGS);
  for (const [name, value] of Object.entries(WORKER_PROCESS_ENV))
    if (env[name] === undefined) missing.push(`${name}=${value}`);
  return missing;
}
