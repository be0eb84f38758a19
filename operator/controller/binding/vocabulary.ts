/**
 * The warm-pool names the binding reads and writes (docs/warm-pools.md). Until the API of the three kinds is
 * merged these are declared here; then they come from api/names.ts.
 */
import { GROUP } from '../../api/names.ts';

export const WARM_POOL_LABEL = `${GROUP}/warm-pool`;
export const TEMPLATE_LABEL = `${GROUP}/template`;
export const SANDBOX_CLAIM_LABEL = `${GROUP}/sandbox-claim`;
export const SANDBOX_CLAIM_FINALIZER = `${GROUP}/sandbox-claim`;
export const TEMPLATE_GENERATION_ANNOTATION = `${GROUP}/template-generation`;
export const SANDBOX_CLAIM = { kind: 'SandboxClaim', plural: 'sandboxclaims' } as const;
export const SANDBOX_WARM_POOL = { kind: 'SandboxWarmPool', plural: 'sandboxwarmpools' } as const;
export const SANDBOX_TEMPLATE = { kind: 'SandboxTemplate', plural: 'sandboxtemplates' } as const;
