/**
 * How far a worker's clock is from the database's. Leases are judged on the
 * database's clock (claim.ts), so this is for monitoring only.
 */
import type { Pool } from 'pg';

/** This process's clock (`now`) minus the database's, in ms, over one round trip. */
export async function clockSkewMs(pool: Pool, now: () => number): Promise<number> {
  const sent = now();
  const { rows } = await pool.query<{ ms: number }>(
    'SELECT extract(epoch FROM clock_timestamp())::float8 * 1000 AS ms',
  );
  const received = now();
  // The database read its clock somewhere in the round trip: assume the middle.
  return (sent + received) / 2 - (rows[0]?.ms ?? Number.NaN);
}
