// Reading an upstream go.mod and writing the throwaway module's go.mod. Pure text in, text out.

export interface UpstreamGoMod {
  /** The `go` directive, e.g. `1.26.0`; null when absent. */
  readonly goVersion: string | null;
  /** `godebug` settings such as `default=go1.26`; they apply only in the main module, so we copy them. */
  readonly godebug: readonly string[];
  /** Modules the upstream replaces with `./staging/src/...` directories. */
  readonly stagingModules: readonly string[];
}

export interface Replacement {
  readonly module: string;
  readonly version: string;
}

const STAGING_LINE = /^\s*(?:replace\s+)?(\S+)(?:\s+v\S+)?\s+=>\s+\.\/staging\/src\/\S+\s*$/;

export function parseUpstreamGoMod(text: string): UpstreamGoMod {
  const lines = text.split('\n').map((line) => line.replace(/\/\/.*$/, '').trimEnd());
  let goVersion: string | null = null;
  const godebug: string[] = [];
  const staging = new Set<string>();
  let inGodebugBlock = false;
  for (const line of lines) {
    const trimmed = line.trim();
    if (inGodebugBlock) {
      if (trimmed === ')') inGodebugBlock = false;
      else if (trimmed !== '') godebug.push(trimmed);
      continue;
    }
    const go = /^go\s+(\S+)$/.exec(trimmed);
    if (go?.[1] !== undefined) goVersion = go[1];
    if (trimmed === 'godebug (') inGodebugBlock = true;
    const single = /^godebug\s+([^(\s]\S*)$/.exec(trimmed);
    if (single?.[1] !== undefined) godebug.push(single[1]);
    const replace = STAGING_LINE.exec(line);
    if (replace?.[1] !== undefined) staging.add(replace[1]);
  }
  return { goVersion, godebug, stagingModules: [...staging].sort() };
}

export function stagingReplacements(upstream: UpstreamGoMod, version: string): Replacement[] {
  return upstream.stagingModules.map((module) => ({ module, version }));
}

export function renderGoMod(
  moduleName: string,
  upstream: UpstreamGoMod,
  replacements: readonly Replacement[],
): string {
  const out = [`module ${moduleName}`, ''];
  if (upstream.goVersion !== null) out.push(`go ${upstream.goVersion}`, '');
  for (const setting of upstream.godebug) out.push(`godebug ${setting}`);
  if (upstream.godebug.length > 0) out.push('');
  if (replacements.length > 0) {
    out.push('replace (');
    for (const r of replacements) out.push(`\t${r.module} => ${r.module} ${r.version}`);
    out.push(')', '');
  }
  return out.join('\n');
}
