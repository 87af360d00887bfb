/**
 * The reference server itself: a real `node:http` server on 127.0.0.1 that
 * reads each request, decides what to do with it in one tick (outage,
 * scripted fault, authorization, the key table's check-and-set), runs the
 * business effect once, and answers, or loses the answer, as scripted.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { FAKE_REQUEST_HEADER } from '../fake-runtime.js';
import { createHold, FaultQueue, HoldQueue, type RequestIdentity } from './faults.js';
import { decodeBody, fingerprintRequest } from './fingerprint.js';
import { type Decision, KeyTable } from './keys.js';
import { LedgerRecorder } from './ledger.js';
import { type Exchange, headerValue, readKey } from './request.js';
import { corsHeaders, jsonResponse, preflightResponse, rejection, type WireResponse } from './responses.js';
import { resolveSettings, type Settings } from './settings.js';
import { triage } from './triage.js';
import type {
  Fault,
  FaultMatch,
  Hold,
  LedgerOutcome,
  Outage,
  ReferenceRequest,
  ReferenceServer,
  ReferenceServerOptions,
} from './types.js';

class ReferenceServerImpl implements ReferenceServer {
  readonly ledger = new LedgerRecorder();
  url = '';
  port = 0;

  readonly #settings: Settings;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #keys: KeyTable;
  readonly #faults = new FaultQueue();
  readonly #holds = new HoldQueue();
  #waiters: { n: number; resolve: () => void }[] = [];
  #outage: Outage | undefined;
  #seen = 0;
  #effectNumber = 0;
  #generation = 0;

  constructor(settings: Settings) {
    this.#settings = settings;
    this.#keys = new KeyTable(settings);
    this.#server = createServer((req, res) => this.#onRequest(req, res));
    this.#server.on('connection', (socket) => this.#track(socket));
  }

  listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, '127.0.0.1', () => {
        this.#server.off('error', reject);
        this.port = (this.#server.address() as AddressInfo).port;
        this.url = `http://127.0.0.1:${this.port}`;
        resolve();
      });
    });
  }

  script(...faults: Fault[]): void {
    this.#faults.push(faults);
  }

  setOutage(outage: Outage | undefined): void {
    this.#outage = outage;
  }

  hold(match?: FaultMatch): Hold {
    const { pending, hold } = createHold(match);
    this.#holds.push(pending);
    return hold;
  }

  waitForRequests(n: number): Promise<void> {
    if (this.#seen >= n) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ n, resolve }));
  }

  reset(): void {
    this.#keys.clear();
    this.ledger.clear();
    this.#faults.clear();
    this.#holds.clear();
    this.#outage = undefined;
    this.#seen = 0;
    this.#effectNumber = 0;
    this.#generation += 1;
  }

  close(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    // Held and dropped requests never end on their own; server.close() alone would wait forever.
    this.#server.closeAllConnections();
    for (const socket of this.#sockets) socket.destroy();
    return closed;
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
  }

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    const method = (req.method ?? 'GET').toUpperCase();
    if (method === 'OPTIONS') {
      const preflight = preflightResponse(
        headerValue(req, 'origin'),
        headerValue(req, 'access-control-request-headers'),
        this.#settings.keyHeader,
      );
      this.#send(req, res, preflight);
      return;
    }
    const key = readKey(req, this.#settings.keyHeader);
    if (key !== undefined) res.once('close', this.ledger.enterFlight(key));
    const generation = this.#generation;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => undefined);
    req.on('end', () => {
      const identity = { method, path: req.url ?? '/', key };
      this.#onReceived(req, res, identity, Buffer.concat(chunks), generation);
    });
  }

  /** Runs in one tick from body end to key claim: this is what makes the claim atomic. */
  #onReceived(
    req: IncomingMessage,
    res: ServerResponse,
    identity: RequestIdentity,
    raw: Buffer,
    generation: number,
  ): void {
    const body = decodeBody(raw, headerValue(req, 'content-type'));
    const fingerprint = fingerprintRequest(identity.method, identity.path, body);
    const exchange: Exchange = { ...identity, req, res, body, fingerprint, fault: undefined, generation };
    const decision = triage(exchange, this.#activeOutage(), this.#faults, this.#keys, this.#settings);
    this.#countSeen();
    // A handler header the socket rejects must not crash the test process; the client sees a reset.
    this.#execute(exchange, decision).catch(() => req.socket.destroy());
  }

  #countSeen(): void {
    this.#seen += 1;
    const ready = this.#waiters.filter((waiter) => waiter.n <= this.#seen);
    this.#waiters = this.#waiters.filter((waiter) => waiter.n > this.#seen);
    for (const waiter of ready) waiter.resolve();
  }

  #activeOutage(): Outage | undefined {
    const outage = this.#outage;
    if (outage?.until !== undefined && this.#settings.now() >= outage.until) this.#outage = undefined;
    return this.#outage;
  }

  async #execute(exchange: Exchange, decision: Decision): Promise<void> {
    if (exchange.fault?.kind === 'delay') await this.#sleep(exchange.fault.ms, exchange);
    if (decision.kind === 'destroy') {
      this.#record(exchange, 'fault', undefined);
      exchange.req.socket.destroy();
      return;
    }
    if (decision.kind === 'respond') {
      this.#record(exchange, decision.outcome, decision.response.status);
      this.#deliver(exchange, decision.response);
      return;
    }
    const response = await this.#runEffect(exchange, decision);
    const hold = response.status < 500 ? this.#holds.take(exchange) : undefined;
    if (hold !== undefined) {
      hold.arrive();
      this.#park(exchange, hold.gate);
      await hold.gate;
    }
    this.#deliver(exchange, response);
  }

  /** Failed effects (>= 500 or a throw) release the key: nothing happened, so a retry must run. */
  async #runEffect(exchange: Exchange, decision: Extract<Decision, { kind: 'effect' }>): Promise<WireResponse> {
    this.#effectNumber += 1;
    const request: ReferenceRequest = {
      method: exchange.method,
      path: exchange.path,
      body: exchange.body.value,
      key: exchange.key,
      effectNumber: this.#effectNumber,
    };
    const response = await this.#invokeHandler(request);
    this.#keys.settle(exchange.key, decision.claim, response);
    if (response.status >= 500) {
      this.#record(exchange, 'failed', response.status);
      return response;
    }
    if (exchange.generation === this.#generation) this.ledger.countEffect(exchange.key);
    this.#record(exchange, decision.outcome, response.status);
    return response;
  }

  async #invokeHandler(request: ReferenceRequest): Promise<WireResponse> {
    try {
      const result = await this.#settings.handle(request);
      return jsonResponse(result.status, result.body, result.headers);
    } catch {
      return rejection(this.#settings.profile, 'internal');
    }
  }

  /** Applies the after-commit faults: the server did the work, the client never hears of it. */
  #deliver(exchange: Exchange, response: WireResponse): void {
    const kind = exchange.fault?.kind;
    if (kind === 'drop-after-commit') {
      // Never answered: only the client's timeout (virtual time, for a test runtime) can end it.
      this.#park(exchange, new Promise<void>((resolve) => exchange.res.once('close', resolve)));
      return;
    }
    if (kind === 'reset-after-commit') {
      exchange.req.socket.destroy();
      return;
    }
    this.#send(exchange.req, exchange.res, response);
  }

  #send(req: IncomingMessage, res: ServerResponse, response: WireResponse): void {
    if (res.writableEnded || res.destroyed) return;
    const headers = { ...corsHeaders(headerValue(req, 'origin')), ...response.headers };
    res.writeHead(response.status, headers);
    res.end(req.method === 'HEAD' ? undefined : response.body);
  }

  #record(exchange: Exchange, outcome: LedgerOutcome, status: number | undefined): void {
    if (exchange.generation !== this.#generation) return;
    this.ledger.record({
      at: this.#settings.now(),
      method: exchange.method,
      path: exchange.path,
      key: exchange.key,
      fingerprint: exchange.fingerprint,
      outcome,
      status,
      ...(exchange.fault === undefined ? {} : { fault: exchange.fault.kind }),
    });
  }

  /** Tells a test runtime that this request now waits on virtual time (or on the test), not on real work. */
  #park(exchange: Exchange, until: Promise<unknown>): void {
    this.#settings.runtime?.park?.(headerValue(exchange.req, FAKE_REQUEST_HEADER), until);
  }

  #sleep(ms: number, exchange: Exchange): Promise<void> {
    const runtime = this.#settings.runtime;
    if (runtime !== undefined) {
      const slept = runtime.sleep(ms);
      this.#park(exchange, slept);
      return slept;
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        resolve();
      }, ms);
      this.#timers.add(timer);
    });
  }
}

/** Starts a reference idempotent server on 127.0.0.1 (an ephemeral port by default). */
export async function startReferenceServer(options: ReferenceServerOptions = {}): Promise<ReferenceServer> {
  const server = new ReferenceServerImpl(resolveSettings(options));
  await server.listen(options.port ?? 0);
  return server;
}
