import { describe, expect, it } from 'vitest';
import { candidatesToSkip, Reservations } from '../../../../operator/controller/binding/reservations.ts';

describe('the binding’s reservations', () => {
  it('a reserved candidate is skipped by other turns of the namespace until released', () => {
    const reservations = new Reservations();
    const release = reservations.reserve('team-a', 'pool-x');
    const tried = new Set(['pool-y']);
    expect([...candidatesToSkip(tried, reservations, 'team-a')].sort()).toEqual(['pool-x', 'pool-y']);
    expect(candidatesToSkip(tried, reservations, 'team-b')).toBe(tried);
    release();
    expect(candidatesToSkip(tried, reservations, 'team-a')).toBe(tried);
    expect(reservations.reserved('team-a').size).toBe(0);
  });

  it('releasing one name keeps the others of the namespace reserved', () => {
    const reservations = new Reservations();
    const first = reservations.reserve('team-a', 'a');
    reservations.reserve('team-a', 'b');
    first();
    expect([...reservations.reserved('team-a')]).toEqual(['b']);
  });
});
