// The local cloud's HTTP API (JSON over fastify). Every error is `{"error":{"code","message"}}`
// with the status that classifies it: 400 bad request, 404 unknown object or path, 409 wrong
// state or taken name/address.
//
//   GET  /healthz
//   GET  /v1/instance-types                 GET /v1/zones
//   GET  /v1/instances[?state=a,b&name=x&id=i-…]    POST /v1/instances
//   GET  /v1/instances/:id                  DELETE /v1/instances/:id (terminate)
//   POST /v1/instances/:id/{start,stop,reboot,terminate}
//   GET  /v1/loadbalancers                  GET|PUT|DELETE /v1/loadbalancers/:name
//   GET  /v1/routes   POST /v1/routes       GET|DELETE /v1/routes/:name
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import { answerClientError, clientErrorOf, REQUEST_LIMITS, REQUEST_TIMEOUT_MS } from '../common/http-limits.js';
import { INSTANCE_TYPES, REGION, ZONES } from './catalogue.js';
import type { LocalCloud } from './cloud.js';
import { CloudError } from './errors.js';
import { OPERATIONS, type Operation } from './lifecycle.js';
import type { Network } from './network.js';
import type { InstanceState } from './types.js';

function listParam(v: unknown): string[] | undefined {
  if (v === undefined) return undefined;
  return (Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(',')).map((x) => x.trim()).filter(Boolean);
}

/** The error body for a status the framework or Node's parser chose. */
function problem(status: number, message: string): { error: { code: string; message: string } } {
  const code = status >= 500 ? 'InternalError' : status === 413 ? 'RequestTooLarge' : status === 408 ? 'RequestTimeout' : 'InvalidRequest';
  return { error: { code, message } };
}

export function buildCloudApi(cloud: LocalCloud, network: Network): FastifyInstance {
  const app = Fastify({
    logger: false, bodyLimit: 256 * 1024,
    // Slow clients are cut off, and requests Node cannot parse answered in the API's own form (common/http-limits.ts).
    http: REQUEST_LIMITS, requestTimeout: REQUEST_TIMEOUT_MS,
    clientErrorHandler: (err, socket) => answerClientError(socket, clientErrorOf(err), ({ code, message }) => ({ contentType: 'application/json', body: JSON.stringify(problem(code, message)) })),
    frameworkErrors: (err, _req, reply) => void (reply as FastifyReply).code(400).send(problem(400, err.message)),
  });

  app.setErrorHandler((error: FastifyError | CloudError, _req, reply) => {
    if (error instanceof CloudError) return reply.code(error.status).send(error.toJSON());
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    return reply.code(status).send(problem(status, error.message));
  });
  app.setNotFoundHandler((req, reply) => reply.code(404).send({ error: { code: 'NotFound', message: `no such endpoint: ${req.method} ${req.url.split('?')[0]}` } }));

  app.get('/healthz', async () => 'ok');
  app.get('/v1/instance-types', async () => ({ instanceTypes: INSTANCE_TYPES }));
  app.get('/v1/zones', async () => ({ region: REGION, zones: ZONES }));

  app.get('/v1/instances', async (req) => {
    const q = req.query as Record<string, unknown>;
    const unknown = Object.keys(q).filter((k) => !['state', 'name', 'id'].includes(k));
    if (unknown.length) throw new CloudError(400, 'InvalidParameter', `unknown filter ${unknown.map((k) => `"${k}"`).join(', ')} (filters: state, name, id)`);
    return { instances: cloud.describeInstances({ states: listParam(q.state) as InstanceState[] | undefined, names: listParam(q.name), ids: listParam(q.id) }) };
  });
  app.post('/v1/instances', async (req, reply) => reply.code(201).send(cloud.createInstance(req.body)));
  app.get('/v1/instances/:id', async (req) => cloud.getInstance((req.params as { id: string }).id));
  app.delete('/v1/instances/:id', async (req) => cloud.operate('terminate', (req.params as { id: string }).id));
  app.post('/v1/instances/:id/:op', async (req) => {
    const { id, op } = req.params as { id: string; op: string };
    if (!OPERATIONS.includes(op as Operation)) throw new CloudError(404, 'NotFound', `no such instance operation "${op}" (operations: ${OPERATIONS.join(', ')})`);
    return cloud.operate(op as Operation, id);
  });

  app.get('/v1/loadbalancers', async () => ({ loadBalancers: network.listLoadBalancers() }));
  app.get('/v1/loadbalancers/:name', async (req) => network.getLoadBalancer((req.params as { name: string }).name));
  app.put('/v1/loadbalancers/:name', async (req, reply) => {
    const { loadBalancer, created } = network.ensureLoadBalancer((req.params as { name: string }).name, req.body);
    return reply.code(created ? 201 : 200).send(loadBalancer);
  });
  app.delete('/v1/loadbalancers/:name', async (req) => network.deleteLoadBalancer((req.params as { name: string }).name));

  app.get('/v1/routes', async () => ({ routes: network.listRoutes() }));
  app.post('/v1/routes', async (req, reply) => reply.code(201).send(network.createRoute(req.body)));
  app.get('/v1/routes/:name', async (req) => network.getRoute((req.params as { name: string }).name));
  app.delete('/v1/routes/:name', async (req) => network.deleteRoute((req.params as { name: string }).name));

  return app;
}
