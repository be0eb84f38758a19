/**
 * The TypeScript client against the shared vectors (test/conformance/vectors): the same files the Python
 * client's unit tests read, so both derive the same names and make the same decisions, byte for byte.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { judgeFence, type SandboxRead } from '../../../operator/client/fence.ts';
import { reportedAnnotation, sessionReferenceName } from '../../../operator/client/names.ts';
import { decideReport, turnStatusPatch, type TurnRecord } from '../../../operator/client/report-facts.ts';
import { reportKey } from '../../../operator/client/report-rule.ts';
import { judgeReattach } from '../../../operator/client/reattach.ts';
import { planWithdrawal, type AttachWrite } from '../../../operator/client/withdrawal.ts';
import { judgeReadiness, judgeResume } from '../../../operator/client/resume.ts';
import { judgeClaim } from '../../../operator/client/claim-readiness.ts';
import {
  hear,
  UNSEEN_CLAIM,
  type ClaimHeard,
  type ClaimWatch,
} from '../../../operator/client/claim-watch.ts';

// The files are this repository's own test data; their shape is the type each describe names.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
const vectors = <T>(file: string): T =>
  JSON.parse(readFileSync(join(import.meta.dirname, '../../conformance/vectors', file), 'utf8')) as T;

type Cases<T> = { readonly cases: readonly (T & { readonly case: string })[] };

describe('names', () => {
  const names = vectors<{
    sessionReferenceName: { sandbox: string; session: string; name: string }[];
    reportedAnnotation: { delegationId: string; annotation: string }[];
    reportKey: { delegation: string; turnId: string; key: string }[];
  }>('names.json');
  it.each(names.sessionReferenceName)(
    'sessionReferenceName($sandbox, $session)',
    ({ sandbox, session, name }) => expect(sessionReferenceName(sandbox, session)).toBe(name),
  );
  it.each(names.reportedAnnotation)('reportedAnnotation($delegationId)', ({ delegationId, annotation }) =>
    expect(reportedAnnotation(delegationId)).toBe(annotation),
  );
  it.each(names.reportKey)('reportKey($delegation, $turnId)', ({ delegation, turnId, key }) =>
    expect(reportKey(delegation, turnId)).toBe(key),
  );
});

describe('the fence judgement', () => {
  const { cases } = vectors<Cases<{ read: SandboxRead; judgement: unknown }>>('fence.json');
  it.each(cases)('$case', ({ read, judgement }) => expect(judgeFence(read)).toEqual(judgement));
});

describe('the withdrawal plan', () => {
  const { cases } = vectors<Cases<{ written: AttachWrite; route: string; plan: unknown }>>('withdrawal.json');
  it.each(cases)('$case', ({ written, route, plan }) => expect(planWithdrawal(written, route)).toEqual(plan));
});

describe('the report-once decision', () => {
  type Request = Parameters<typeof decideReport>[0];
  const report = vectors<
    Cases<{ request: Partial<Request>; stored: unknown; outcome: unknown }> & { request: Request }
  >('report.json');
  it.each(report.cases)('$case', ({ request, stored, outcome }) =>
    expect(decideReport({ ...report.request, ...request }, stored ?? undefined)).toEqual(outcome),
  );
});

describe('the turn recordTurn writes', () => {
  const ended = vectors<Cases<{ stored: unknown; turn: TurnRecord; patch: unknown }> & { now: string }>(
    'ended-turns.json',
  );
  it.each(ended.cases)('$case', ({ stored, turn, patch }) =>
    expect(turnStatusPatch(stored, turn, ended.now)).toEqual(patch),
  );
});

describe('the re-attach judgement', () => {
  type Fixed = Parameters<typeof judgeReattach>[0];
  type Nullable<T> = { [K in keyof T]?: T[K] | null };
  const reattach = vectors<
    Cases<{ requested: Nullable<Fixed>; stored: unknown; judgement: unknown }> & { requested: Fixed }
  >('reattach.json');
  // The vectors write an absent field as null (JSON has no undefined); the request leaves it out.
  const request = (fields: Nullable<Fixed>): Fixed =>
    Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null)) as Fixed;
  it.each(reattach.cases)('$case', ({ requested, stored, judgement }) =>
    expect(judgeReattach(request({ ...reattach.requested, ...requested }), stored)).toEqual(judgement),
  );
});

describe('the resume judgements', () => {
  type Vector = { case: string; body?: unknown; gone?: true; judgement: unknown };
  const { resume, readiness } = vectors<{ resume: Vector[]; readiness: Vector[] }>('resume.json');
  it.each(resume)('resume: $case', ({ body, judgement }) => expect(judgeResume(body)).toEqual(judgement));
  it.each(readiness)('readiness: $case', ({ body, gone, judgement }) =>
    expect(judgeReadiness(gone ? undefined : body)).toEqual(judgement),
  );
});

describe('the claim readiness judgement', () => {
  const { cases } = vectors<Cases<{ body?: unknown; judgement: unknown }>>('claim.json');
  it.each(cases)('$case', ({ body, judgement }) => expect(judgeClaim(body)).toEqual(judgement));
});

describe('what claim() does with what it hears of its claim', () => {
  type Step = { heard: ClaimHeard; next: unknown; watch?: ClaimWatch };
  const { cases } = vectors<Cases<{ steps: Step[] }>>('claim-watch.json');
  it.each(cases)('$case', ({ steps }) => {
    let watch = UNSEEN_CLAIM;
    for (const [index, step] of steps.entries()) {
      const heard = hear(watch, step.heard);
      expect(heard.next, `step ${index}`).toEqual(step.next);
      if (step.watch !== undefined) expect(heard.watch, `step ${index}`).toEqual(step.watch);
      watch = heard.watch;
    }
  });
});
