// Preamble of a block that handles a card decline: a client, a key, and a server that declines (Stripe's 402).
import { createClient as createClientOfSnippet } from 'oncely';
import { startReferenceServer as startServerOfSnippet } from 'oncely/testing';
import { check as checkSnippet } from '../route.js';

const serverOfSnippet = await startServerOfSnippet({
  profile: 'stripe',
  handle: () => ({
    status: 402,
    body: { error: { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds' } },
  }),
});
const messagesShown: string[] = [];

export const client = createClientOfSnippet({
  baseUrl: serverOfSnippet.url,
  endpoints: { 'POST /payments': { profile: 'stripe' } },
});
export const key = 'pay-cart-9-v3';
export function showMessage(message: string): void {
  messagesShown.push(message);
}

/** The decline reached the block's branch. */
export async function snippetDone(_exports: Record<string, unknown>): Promise<void> {
  checkSnippet(messagesShown.length === 1, 'the decline was shown');
  await client.close();
  await serverOfSnippet.close();
}
