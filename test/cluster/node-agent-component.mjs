// A stand-in for a bosun component in the node agent's tests: run as a pod's process, it prints
// its argv, the environment a pod gets and what its service-account files hold, then asks the API
// server for its own pod with the projected token (the answer names the user the token
// authenticated as), and stays up until SIGTERM.
// `crash` as the first argument exits 1 at once instead; `linger` ignores SIGTERM (only SIGKILL ends it).
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';

const args = process.argv.slice(2);
if (args[0] === 'crash') {
  console.error('crashing as asked');
  process.exit(1);
}
const root = process.env.BOSUN_IN_CLUSTER_ROOT ?? '/';
const sa = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
// Paths as the pod sees them, under its root: READ_PATH is printed, WRITE_PATH written.
if (process.env.WRITE_PATH) writeFileSync(join(root, process.env.WRITE_PATH), `written by ${process.env.MY_POD_NAME}\n`);
const token = readFileSync(join(sa, 'token'), 'utf8');
const ca = readFileSync(join(sa, 'ca.crt'), 'utf8');
console.log(JSON.stringify({
  argv: args,
  env: Object.fromEntries(['MY_POD_NAME', 'MY_NAMESPACE', 'MY_POD_IP', 'MY_NODE', 'GREETING', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'].map((k) => [k, process.env[k]])),
  namespace: readFileSync(join(sa, 'namespace'), 'utf8'),
  tokenParts: token.split('.').length,
  read: process.env.READ_PATH ? readFileSync(join(root, process.env.READ_PATH), 'utf8') : undefined,
}));
const req = request({
  host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT, method: 'GET', ca,
  path: `/api/v1/namespaces/${process.env.MY_NAMESPACE}/pods/${process.env.MY_POD_NAME}`,
  headers: { authorization: `Bearer ${token}` },
}, (res) => {
  let text = '';
  res.on('data', (d) => (text += d));
  res.on('end', () => console.log(`whoami ${res.statusCode} ${JSON.parse(text).message ?? 'allowed'}`));
});
req.on('error', (e) => console.log(`whoami error ${e.message}`));
req.end();
process.on('SIGTERM', () => {
  console.log('SIGTERM received');
  if (args[0] !== 'linger') process.exit(0);
});
setInterval(() => {}, 60_000);
