// The built-in sample workload behind the image `bosun.local/echo`: an HTTP server on the pod's IP
// and port that answers every request with its pod name and logs each request (one line on
// stdout, which the node agent writes to the container's log). Run as its own process by the agent.
import { createServer } from 'node:http';
import { closeServer } from '../../common/http-server.js';
import { holdLifeline } from '../../common/lifeline.js';

holdLifeline();

const address = process.env.BOSUN_ECHO_ADDRESS ?? '127.0.0.1';
const port = Number(process.env.BOSUN_ECHO_PORT ?? 8080);
const podName = process.env.BOSUN_ECHO_POD_NAME ?? 'echo';

const server = createServer((req, res) => {
  console.log(`${new Date().toISOString()} ${req.socket.remoteAddress} ${req.method} ${req.url}`);
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end(`${podName}\n`);
});
server.listen(port, address, () => console.log(`echo server for pod ${podName} listening on ${address}:${port}`));
process.on('SIGTERM', () => {
  console.log('SIGTERM received; closing');
  void closeServer(server).then(() => process.exit(0));
});
