/**
 * Real node:http servers on 127.0.0.1 for the node:http transport's tests,
 * and a watch on which client sent each request: node:http's requests are
 * published on its `http.client.request.start` channel, Node's fetch's
 * (undici) on `undici:request:create`.
 */
import * as diagnostics from 'node:diagnostics_channel';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Served {
  url: string;
  /** Every request received: method, path, raw header pairs, body bytes. */
  received: { method: string; path: string; rawHeaders: string[]; body: Buffer }[];
  close(): Promise<void>;
}

/** A server answering each request with `answer`, once its body was read. */
export async function serve(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<Served> {
  const received: Served['received'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        path: req.url ?? '',
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
      });
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Counts the requests node:http and undici start, from now until `stop()`. */
export function watchClients(): { nodeHttp: () => number; undici: () => number; stop(): void } {
  let nodeHttp = 0;
  let undici = 0;
  const onNode = (): void => {
    nodeHttp++;
  };
  const onUndici = (): void => {
    undici++;
  };
  diagnostics.subscribe('http.client.request.start', onNode);
  diagnostics.subscribe('undici:request:create', onUndici);
  return {
    nodeHttp: () => nodeHttp,
    undici: () => undici,
    stop() {
      diagnostics.unsubscribe('http.client.request.start', onNode);
      diagnostics.unsubscribe('undici:request:create', onUndici);
    },
  };
}

/** Resolves once node:http has the response headers of its next request (its body not read yet). */
export function nextResponseHeaders(): Promise<void> {
  return new Promise<void>((resolve) => {
    const seen = (): void => {
      diagnostics.unsubscribe('http.client.response.finish', seen);
      resolve();
    };
    diagnostics.subscribe('http.client.response.finish', seen);
  });
}
