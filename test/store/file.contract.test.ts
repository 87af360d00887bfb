import * as fs from 'node:fs';
import { afterEach, describe, it } from 'vitest';
import type { FileStore } from '../../src/node.js';
import { storeContract } from '../../src/store.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { fileStore } from '../helpers/machine.js';

afterEach(removeTempDirs);

describe('fileStore: the store contract', () => {
  for (const c of storeContract({
    create: () => fileStore({ dir: tempDir() }),
    // Another handle on the same directory, as another process would open it.
    reopen: (store) => fileStore({ dir: (store as FileStore).dir }),
    // Overwrite the bytes on disk, behind the store's back.
    corrupt: (store, key, text) => fs.writeFileSync((store as FileStore).pathOf(key), text),
  })) {
    it(c.name, c.run);
  }
});
