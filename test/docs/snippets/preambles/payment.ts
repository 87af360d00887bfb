// Preamble of the payment example: the names an app has, and a local server speaking Stripe's dialect.
import { startReferenceServer as startServerOfSnippet } from 'oncely/testing';
import { check as checkSnippet, routeExampleApi as routeSnippetApi } from '../route.js';

const serverOfSnippet = await startServerOfSnippet({ profile: 'stripe' });
routeSnippetApi(serverOfSnippet.url);
const declinesShown: string[] = [];

export const KEY_SECRET = 'the app secret of key derivation';
export async function getToken(): Promise<string> {
  return 'token-1';
}
export function showDecline(code: string): void {
  declinesShown.push(code);
}

/** The payment reached the server once, and nothing was declined. */
export async function snippetDone(_exports: Record<string, unknown>): Promise<void> {
  checkSnippet(serverOfSnippet.ledger.totalEffects() === 1, 'one payment took effect');
  checkSnippet(declinesShown.length === 0, 'no decline');
  await serverOfSnippet.close();
}
