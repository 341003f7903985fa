// The HTTP floor the API server is compared with: a bare fastify HTTPS server, in a process of its
// own, with the API server's certificate, TLS settings and request limits, that parses each JSON
// body it is sent and answers every request with a fixed body (the one the API server answered the
// same request with) and the same status a create, update or get gets. What the API server does
// beyond this — authentication, authorization, admission, storage, watch fan-out, audit — is what
// its rates fall short of the floor by.
//
//   node --import tsx bench/lib/http-floor.ts <data dir> <body file>    prints "listening on <url>"
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { REQUEST_LIMITS, REQUEST_TIMEOUT_MS } from '../../src/common/http-limits.js';
import { loadServingMaterial } from '../../src/apiserver/serving.js';

/** The floor's process, with the URL it serves on. */
export type HttpFloorProcess = ChildProcess & { url: string };

/** Starts the floor over the API server's data directory (its certificate), answering `bodyFile`'s bytes. */
export async function startHttpFloor(dataDir: string, bodyFile: string): Promise<HttpFloorProcess> {
  const floor = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, dataDir, bodyFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    floor.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (https:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    floor.once('exit', () => reject(new Error(`the HTTP floor exited: ${out}`)));
  });
  floor.stdout!.resume();
  return Object.assign(floor, { url });
}

async function serve(dataDir: string, bodyFile: string): Promise<void> {
  const serving = await loadServingMaterial(dataDir, '127.0.0.1');
  const body = readFileSync(bodyFile);
  const app = Fastify({
    https: { ...REQUEST_LIMITS, requireHostHeader: false, key: serving.keyPem, cert: serving.certPem, minVersion: 'TLSv1.2', requestCert: true, rejectUnauthorized: false, ca: serving.caPem },
    requestTimeout: REQUEST_TIMEOUT_MS,
    logger: false,
  });
  const status: Record<string, number> = { POST: 201, PUT: 200, GET: 200 };
  app.route({
    method: ['GET', 'POST', 'PUT'],
    url: '*',
    handler: async (request, reply) => reply.code(status[request.method]).header('content-type', 'application/json').send(body),
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  console.log(`listening on ${address}`);
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

if (process.argv[1] === new URL(import.meta.url).pathname) await serve(process.argv[2], process.argv[3]);
