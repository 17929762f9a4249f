import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeArgsFor, ROLE_NODE_FLAGS } from '../src/index.js';

/** A package with a source entry, and optionally its compiled twin. */
function pkg(built: boolean): string {
  const root = mkdtempSync(join(tmpdir(), 'node-args-'));
  mkdirSync(join(root, 'src/bin'), { recursive: true });
  writeFileSync(join(root, 'src/bin/api.ts'), '');
  if (built) {
    mkdirSync(join(root, 'dist/bin'), { recursive: true });
    writeFileSync(join(root, 'dist/bin/api.js'), '');
  }
  return root;
}

describe('nodeArgsFor', () => {
  it("runs a built role's twin with production's flags when asked", () => {
    const root = pkg(true);
    expect(nodeArgsFor(join(root, 'src/bin/api.ts'), true)).toEqual([
      ...ROLE_NODE_FLAGS,
      join(root, 'dist/bin/api.js'),
    ]);
  });

  it('runs the source through tsx when not asked, or when nothing was built for it', () => {
    const built = pkg(true);
    expect(nodeArgsFor(join(built, 'src/bin/api.ts'), false)).toEqual([
      '--import',
      'tsx',
      join(built, 'src/bin/api.ts'),
    ]);
    const unbuilt = pkg(false);
    expect(nodeArgsFor(join(unbuilt, 'src/bin/api.ts'), true)).toEqual([
      '--import',
      'tsx',
      join(unbuilt, 'src/bin/api.ts'),
    ]);
  });
});

describe('nodeArgsFor, with role bundles', () => {
  it("runs a role's bundle when the bundle directory holds one, else the role as before", () => {
    const root = pkg(true);
    const bundles = mkdtempSync(join(tmpdir(), 'bundles-'));
    writeFileSync(join(bundles, 'api.mjs'), '');
    expect(nodeArgsFor(join(root, 'src/bin/api.ts'), true, bundles)).toEqual([
      ...ROLE_NODE_FLAGS,
      join(bundles, 'api.mjs'),
    ]);
    mkdirSync(join(root, 'dist/bin'), { recursive: true });
    writeFileSync(join(root, 'src/bin/relay.ts'), '');
    writeFileSync(join(root, 'dist/bin/relay.js'), '');
    expect(nodeArgsFor(join(root, 'src/bin/relay.ts'), true, bundles)).toEqual([
      ...ROLE_NODE_FLAGS,
      join(root, 'dist/bin/relay.js'),
    ]);
  });
});
