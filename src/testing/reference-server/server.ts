import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { FAKE_REQUEST_HEADER } from '../fake-runtime.js';
import { createHold, FaultQueue, HoldQueue, type RequestIdentity } from './faults.js';
import { type DecodedBody, decodeBody, fingerprintRequest } from './fingerprint.js';
import { LedgerRecorder } from './ledger.js';
import {
  corsHeaders,
  injectedResponse,
  jsonResponse,
  type Profile,
  preflightResponse,
  rejection,
  type WireResponse,
  withHeader,
  withRetryAfter,
} from './responses.js';
import type {
  Fault,
  FaultMatch,
  Hold,
  LedgerOutcome,
  Outage,
  ReferenceRequest,
  ReferenceResponse,
  ReferenceServer,
  ReferenceServerOptions,
  ServerRuntime,
} from './types.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Per-key state. `response` is set once the effect has committed. */
interface KeyRecord {
  state: 'in_progress' | 'completed';
  fingerprint: string;
  createdAt: number;
  response?: WireResponse;
}

interface Settings {
  keyHeader: string;
  profile: Profile;
  keyRetentionMs: number;
  now: () => number;
  requireKey: boolean;
  authorize: ((authorization: string | undefined) => boolean) | undefined;
  handle: (req: ReferenceRequest) => ReferenceResponse | Promise<ReferenceResponse>;
  runtime: ServerRuntime | undefined;
}

/** Everything known about one request once its body has been read. */
interface Exchange extends RequestIdentity {
  req: IncomingMessage;
  res: ServerResponse;
  body: DecodedBody;
  fingerprint: string;
  fault: Fault | undefined;
  /** The `reset()` generation the request arrived in; stale ones stay out of the ledger. */
  generation: number;
}

/** What to do with a request, decided synchronously so the key claim is atomic. */
type Decision =
  | { kind: 'respond'; outcome: LedgerOutcome; response: WireResponse }
  | { kind: 'destroy' }
  | { kind: 'effect'; outcome: 'effect' | 'expired_new'; claim: KeyRecord | undefined };

/** Default business effect: echo the JSON body under a fresh id, like a create endpoint. */
function defaultHandle(req: ReferenceRequest): ReferenceResponse {
  const fields = isPlainObject(req.body) ? req.body : {};
  return { status: 201, body: { id: `res_${req.effectNumber}`, ...fields } };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function resolveSettings(options: ReferenceServerOptions): Settings {
  return {
    keyHeader: options.keyHeader ?? 'Idempotency-Key',
    profile: options.profile ?? 'ietf',
    keyRetentionMs: options.keyRetentionMs ?? DAY_MS,
    now: options.now ?? options.runtime?.now ?? Date.now,
    runtime: options.runtime,
    requireKey: options.requireKey ?? true,
    authorize: options.authorize,
    handle: options.handle ?? defaultHandle,
  };
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The IETF draft sends the key as a structured-field string (`"abc"`) while
 * Stripe-style clients send it bare; both name the same key.
 */
function readKey(req: IncomingMessage, keyHeader: string): string | undefined {
  const raw = headerValue(req, keyHeader)?.trim();
  if (raw === undefined) return undefined;
  const unquoted = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  return unquoted === '' ? undefined : unquoted;
}

function isSafeMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

function needsKey(method: string): boolean {
  return method === 'POST' || method === 'PATCH';
}

class ReferenceServerImpl implements ReferenceServer {
  readonly ledger = new LedgerRecorder();
  url = '';
  port = 0;

  readonly #settings: Settings;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #keys = new Map<string, KeyRecord>();
  readonly #faults = new FaultQueue();
  readonly #holds = new HoldQueue();
  #waiters: { n: number; resolve: () => void }[] = [];
  #outage: Outage | undefined;
  #seen = 0;
  #effectNumber = 0;
  #generation = 0;

  constructor(settings: Settings) {
    this.#settings = settings;
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
    const decision = this.#decide(exchange);
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

  #decide(exchange: Exchange): Decision {
    const { profile, authorize } = this.#settings;
    const outage = this.#activeOutage();
    if (outage !== undefined) {
      const response = withRetryAfter(injectedResponse(profile, outage.status, undefined), outage.retryAfter);
      return { kind: 'respond', outcome: 'outage', response };
    }
    exchange.fault = this.#faults.take(exchange);
    const fault = exchange.fault;
    if (fault?.kind === 'reset-before-commit') return { kind: 'destroy' };
    if (fault?.kind === 'status') {
      const injected = withRetryAfter(injectedResponse(profile, fault.status, fault.body), fault.retryAfter);
      const response = { ...injected, headers: { ...injected.headers, ...fault.headers } };
      return { kind: 'respond', outcome: 'fault', response };
    }
    if (authorize !== undefined && !authorize(headerValue(exchange.req, 'authorization'))) {
      return { kind: 'respond', outcome: 'unauthorized', response: rejection(profile, 'unauthorized') };
    }
    if (isSafeMethod(exchange.method)) {
      return { kind: 'respond', outcome: 'read', response: jsonResponse(200, { ok: true }) };
    }
    if (exchange.key === undefined) {
      if (this.#settings.requireKey && needsKey(exchange.method)) {
        return { kind: 'respond', outcome: 'missing_key', response: rejection(profile, 'missing_key') };
      }
      return { kind: 'effect', outcome: 'effect', claim: undefined };
    }
    return this.#decideKeyed(exchange.key, exchange.fingerprint);
  }

  /** Check-and-set on the key map with no await in between. */
  #decideKeyed(key: string, fingerprint: string): Decision {
    const { profile, keyRetentionMs, now } = this.#settings;
    let record = this.#keys.get(key);
    const expired = record !== undefined && now() - record.createdAt >= keyRetentionMs;
    if (expired) {
      this.#keys.delete(key);
      record = undefined;
    }
    if (record === undefined) {
      const claim: KeyRecord = { state: 'in_progress', fingerprint, createdAt: now() };
      this.#keys.set(key, claim);
      return { kind: 'effect', outcome: expired ? 'expired_new' : 'effect', claim };
    }
    if (record.fingerprint !== fingerprint) {
      return { kind: 'respond', outcome: 'mismatch', response: rejection(profile, 'mismatch') };
    }
    if (record.state === 'in_progress' || record.response === undefined) {
      return { kind: 'respond', outcome: 'in_progress', response: rejection(profile, 'in_progress') };
    }
    const response = withHeader(record.response, 'Idempotent-Replayed', 'true');
    return { kind: 'respond', outcome: 'replay', response };
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
    const { claim } = decision;
    const current = exchange.key !== undefined && this.#keys.get(exchange.key) === claim;
    if (response.status >= 500) {
      if (current && exchange.key !== undefined) this.#keys.delete(exchange.key);
      this.#record(exchange, 'failed', response.status);
      return response;
    }
    if (claim !== undefined && current) {
      claim.state = 'completed';
      claim.response = response;
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
