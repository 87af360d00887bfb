/** 12 random hex characters: unique enough to tell two writers (or two lock generations) apart. */
export function randomToken(): string {
  // The UUID's first 12 hex digits (all random: its version digit comes later), without a regex's copies.
  const uuid = globalThis.crypto.randomUUID();
  return uuid.slice(0, 8) + uuid.slice(9, 13);
}
