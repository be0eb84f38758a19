/**
 * The sidecar's folder holds its four homes by audience and nothing beside them (issue 10). What each
 * home may import is fenced in eslint.config.js; import circles are refused by `npm run deps:check`.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../../../operator/sidecar');

describe('operator/sidecar layout', () => {
  it('has the four homes and no file outside them', () => {
    const top = readdirSync(ROOT, { withFileTypes: true });
    expect(top.filter((e) => e.isFile()).map((e) => e.name)).toEqual([]);
    expect(top.map((e) => e.name).sort()).toEqual(['contract', 'host', 'injection', 'process']);
  });
});
