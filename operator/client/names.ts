/**
 * Names derived from the domain's identifiers. Every client derives them alike, byte for byte
 * (test/conformance/vectors/names.json), since two hosts in different languages must find the same objects.
 */
import { createHash } from 'node:crypto';
import { GROUP } from '../api/names.ts';

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** One SessionReference per (session, sandbox): its name is derived from both, so a second attach finds the first. */
export function sessionReferenceName(sandbox: string, session: string): string {
  return `${sandbox.slice(0, 40)}-${sha256Hex(`${sandbox}\n${session}`).slice(0, 16)}`;
}

/** Annotations holding the last reported turn of each delegation; the name is a hash of the delegation. */
export const REPORTED_ANNOTATION_PREFIX = `report.${GROUP}/`;

export const reportedAnnotation = (delegationId: string): string =>
  REPORTED_ANNOTATION_PREFIX + sha256Hex(delegationId).slice(0, 40);
