// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// A Node worker_threads "tab" for share.test.mjs: runs share-tab.mjs's runTab with the
// package and posts its result back.
import { parentPort, workerData } from "node:worker_threads";
import * as api from "resilient-fetch";
import { runTab } from "./share-tab.mjs";

parentPort.postMessage(await runTab(api, workerData));
