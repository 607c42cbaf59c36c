import { exitOnWorkerFailure, runWorker } from '../workers/runWorker';
import { createStandInDelivery } from './chains/standInDelivery';

/**
 * The worker process of the local stack and of tests that run it as a process: the production worker
 * (workers/runWorker.ts) plus the stand-in messenger's bridge delivery of the local chains.
 */
runWorker({ bridgeDeliveries: [createStandInDelivery] }).catch(exitOnWorkerFailure);
