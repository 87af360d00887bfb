// Preamble of webhook blocks (type-checked only): the app's client, web framework, provider SDK and database.
import type { OncelyClient } from 'oncely';

interface PaymentIntent {
  id: string;
  metadata: Record<string, string>;
}
interface WebhookRequest {
  rawBody: string;
  headers: Record<string, string | undefined>;
}
export declare const client: OncelyClient;
export declare const app: { post(path: string, handler: (req: WebhookRequest) => Promise<void>): void };
export declare const stripe: {
  webhooks: {
    constructEvent(
      body: string,
      signature: string | undefined,
      secret: string,
    ): {
      type: string;
      data: { object: PaymentIntent };
    };
  };
};
export declare const secret: string;
export declare const db: { paymentKeyOf(order: string | undefined): Promise<string> };
export declare function ignoreIfFinal(error: unknown): void;
