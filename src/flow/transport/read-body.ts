/**
 * Reading a response body with a ceiling: an answer of any size (or one
 * that never ends) must not fill the memory of a browser tab or a worker.
 */

/**
 * The body, read chunk by chunk up to `limitBytes`: never more than the
 * limit plus one chunk is held. When there is more, the rest is cancelled
 * unread and `bytes` holds the first `limitBytes`.
 */
export async function readCapped(
  response: Response,
  limitBytes: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const next = await reader?.read();
    if (next === undefined || next.done) break;
    const room = limitBytes - size;
    if (next.value.byteLength > room) {
      chunks.push(next.value.subarray(0, room));
      size = limitBytes;
      truncated = true;
      reader?.cancel().catch(() => undefined);
      break;
    }
    chunks.push(next.value);
    size += next.value.byteLength;
  }
  if (chunks.length === 1) return { bytes: chunks[0] as Uint8Array, truncated };
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { bytes, truncated };
}
