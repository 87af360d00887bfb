// Preamble of reconcile blocks that build the client (type-checked only): the provider's SDK and the app's database.
interface PaymentIntent {
  id: string;
  metadata: Record<string, string>;
}
export declare const stripe: {
  paymentIntents: {
    retrieve(id: string): Promise<PaymentIntent>;
    search(options: { query: string }): Promise<{ data: PaymentIntent[] }>;
  };
};
export declare const db: { orders: { get(id: string): Promise<{ id: string; paymentKey: string }> } };
export declare const orderId: string;
