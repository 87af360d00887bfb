// Preamble of TanStack Query blocks (type-checked only): the app's client, its QueryClient and React hooks.
import { QueryClient, useMutation, useQuery } from '@tanstack/react-query';
import { createBrowserClient } from 'oncely/browser';

export interface Order {
  id: string;
  total: number;
}
export declare const order: Order;
export declare const cartId: string;
export declare function showReceipt(result: unknown): void;
export declare function showCheckWithSupport(key: string): void;
export declare function showRetry(): void;
export const client = createBrowserClient({ baseUrl: 'https://api.example.com/v1/' });
export const queryClient = new QueryClient();
export { useMutation, useQuery };
