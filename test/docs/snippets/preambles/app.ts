// Preamble of fragments (type-checked only): the names of the application around them.
import type { OncelyClient } from 'oncely';

export declare const network: { isUp(): boolean; on(event: 'up', fn: () => void): () => void };
export declare const outbox: OncelyClient;
export declare const app: { use(middleware: unknown): void };
export declare const request: Request;
export declare const amount: number;
export declare function accountIdOf(request: Request): string;
export declare function pay(body: unknown): Promise<unknown>;
export declare function expect(value: unknown): { toEqual(expected: unknown): void };
export declare function advanceTime(ms: number): Promise<void>;
export declare const retentionMs: number;
