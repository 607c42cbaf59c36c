import { exitOnWorkerFailure, runWorker } from './runWorker';

/** The production worker process (`npm run worker`): LayerZero is its only bridge delivery. */
runWorker().catch(exitOnWorkerFailure);
