/** io.ts `entryPrefix`: the paths the store builds by concatenation are the ones `join` gives. */
import { join, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entryPrefix } from '../../src/store/file/io.js';

describe('entryPrefix', () => {
  it('prefix + name is join(dir, name) for a resolved directory, the root included', () => {
    for (const dir of [resolve(sep), resolve(sep, 'a'), resolve(sep, 'a', 'b')]) {
      for (const name of ['k1.json', 'k1.json.pending', 'owner.pending']) {
        expect(entryPrefix(dir) + name).toBe(join(dir, name));
      }
    }
  });
});
