/**
 * Real `node:http` servers on 127.0.0.1 for the server-half tests: one that
 * serves a Fetch-style handler (`(Request) => Promise<Response>`, converted
 * at the socket as Hono's or Next's adapters do) and one that runs a
 * Connect-style chain `(req, res, next)`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestServer {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<TestServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function toRequest(req: IncomingMessage): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD' && body.length > 0;
  return new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, {
    method,
    headers,
    ...(hasBody ? { body } : {}),
  });
}

async function sendResponse(res: ServerResponse, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  res.writeHead(response.status, headers);
  res.end(body);
}

export async function serveFetch(handler: (request: Request) => Promise<Response>): Promise<TestServer> {
  const server = createServer((req, res) => {
    toRequest(req)
      .then(handler)
      .then((response) => sendResponse(res, response))
      .catch(() => req.socket.destroy());
  });
  return listen(server);
}

export type Middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

/** Runs `chain` in order, as Connect does; an error (or the end of the chain) answers 500 / 404. */
export async function serveChain(...chain: Middleware[]): Promise<TestServer> {
  const server = createServer((req, res) => {
    let index = 0;
    const next = (error?: unknown): void => {
      if (error !== undefined) {
        res.statusCode = 500;
        res.end(String(error));
        return;
      }
      const layer = chain[index++];
      if (layer === undefined) {
        res.statusCode = 404;
        res.end('not found');
        return;
      }
      try {
        layer(req, res, next);
      } catch (thrown) {
        next(thrown);
      }
    };
    next();
  });
  return listen(server);
}
