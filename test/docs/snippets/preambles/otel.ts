// Preamble of OpenTelemetry blocks (type-checked only): the app's client and its meter.
import { metrics } from '@opentelemetry/api';
import { createClient } from 'oncely';

export const client = createClient({ baseUrl: 'https://api.example.com/v1/' });
export const meter = metrics.getMeter('shop');
