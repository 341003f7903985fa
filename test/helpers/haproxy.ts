// haproxy for the load-balancer tests: the program the local cloud runs its balancers on
// (src/cloud/haproxy.ts). Tests that need it are skipped when it is missing, except under CI,
// where .ci/run installs it and a missing program is a failure.
import { findHaproxy } from '../../src/cloud/load-balancer-engine.js';

export const HAPROXY = findHaproxy();

/** The `skip` option of a test that runs haproxy. */
export const skipWithoutHaproxy = !HAPROXY && !process.env.CI ? 'haproxy not installed (apt-get install haproxy)' : false;
